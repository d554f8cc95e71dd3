package report_test

import (
	"fmt"

	"github.com/surfkit/surf/internal/report"
)

func ExampleSummary_Describe() {
	fmt.Println(report.Summary{Steps: 1, Images: 1, Ended: true, Bytes: 999}.Describe())
	fmt.Println(report.Summary{Steps: 12, Denied: 2, Errors: 1, Recovered: 1, Images: 10, Missing: 2, Bytes: 1234567}.Describe())
	// Output:
	// 1 step, 1 image, 999 bytes
	// 12 steps, 2 denied, 1 with errors, 1 recovered, 10 images (2 missing), no end, 1,234,567 bytes
}
