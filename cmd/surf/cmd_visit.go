package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/websurfer"
)

func init() {
	c := &command{
		name:    "visit",
		summary: "open a URL in a fresh sandboxed session and print what the model sees",
		usage:   helpText("visit"),
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) (err error) {
		fs := newFlags(c)
		som := fs.String("som", "", "")
		asJSON := fs.Bool("json", false, "")
		bf := addBrowserFlags(fs)
		bf.state = addStateFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usagef(c, "visit takes one URL")
		}
		b, err := bf.open(ctx, cli, openOptions{})
		if err != nil {
			return err
		}
		defer b.closeInto(&err)
		if err := b.checkURL(fs.Arg(0)); err != nil {
			return err
		}
		res, err := b.Surfer().VisitURL(ctx, fs.Arg(0))
		if err != nil {
			return toolError(err)
		}
		obs := res.Observation
		if *som != "" {
			if err := obs.SaveImage(*som); err != nil {
				return fmt.Errorf("saving the set-of-mark image: %w", err)
			}
		}
		if *asJSON {
			enc := json.NewEncoder(cli.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				*websurfer.Observation
				Text    string `json:"text"`
				Session any    `json:"session"`
			}{obs, obs.Text(), b.Session().Info()})
		}
		fmt.Fprint(termsafe.Writer(cli.Stdout), obs.Text())
		return nil
	}
	register(c)
}
