package sandbox

import (
	"slices"
	"testing"
)

func TestMergeFeatureSwitches(t *testing.T) {
	in := []string{
		"--headless", "--disable-features=A,B", "--enable-features=X", "--no-sandbox",
		"--disable-features=B,C,", "--enable-features=Y,X", "--disable-features=",
		"--user-data-dir=/tmp/p", "--disable-features-else=Z",
	}
	want := []string{
		"--headless", "--disable-features=A,B,C", "--enable-features=X,Y", "--no-sandbox",
		"--user-data-dir=/tmp/p", "--disable-features-else=Z",
	}
	if got := mergeFeatureSwitches(in); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	plain := []string{"--a", "--disable-features=Q", "--b"}
	if got := mergeFeatureSwitches(plain); !slices.Equal(got, plain) {
		t.Errorf("a single switch changed: %q", got)
	}
}
