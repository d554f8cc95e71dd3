package bench

import "testing"

func TestPerSession(t *testing.T) {
	got, ok := PerSession([]SessionsResult{
		{Sessions: 4, PeakRSSMB: 700, PeakPSSMB: 500},
		{Sessions: 1, PeakRSSMB: 400, PeakPSSMB: 320},
		{Sessions: 16, PeakRSSMB: 1900, PeakPSSMB: 1220},
	})
	if !ok || got.From != 1 || got.To != 16 || got.RSS != 100 || got.PSS != 60 {
		t.Fatalf("perSession = %+v, %v; want 1..16, 100 MB RSS, 60 MB PSS", got, ok)
	}
	if _, ok := PerSession([]SessionsResult{{Sessions: 8}}); ok {
		t.Fatal("one run cannot give a slope")
	}
	if _, ok := PerSession([]SessionsResult{{Sessions: 8}, {Sessions: 8}}); ok {
		t.Fatal("two runs of the same size cannot give a slope")
	}
}
