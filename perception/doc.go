// Package perception turns what Chromium returns for a page (DOM snapshots, accessibility nodes, layout metrics, frame placement) into numbered elements and the observation text, with no browser in sight.
package perception
