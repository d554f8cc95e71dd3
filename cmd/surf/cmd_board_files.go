package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/termsafe"
)

func init() {
	addBoardSub("files", boardFilesUsage, boardFiles)
	addBoardSub("get", boardGetUsage, boardGet)
}

// The files that travel with a task: board add --attach, board files,
// board get. The logic is board's (Task.AttachFile, Record.FindFile,
// Board.ReadFile).

var boardFilesUsage = helpText("board-files")

var boardGetUsage = helpText("board-get")

// attachFiles attaches the files of --attach to t, refusing what is not
// a readable regular file.
func attachFiles(t *board.Task, paths []string) error {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return withHint(fmt.Errorf("--attach: %w", err), "give a file the worker's task will upload")
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("--attach %s is not a regular file", p)
		}
		t.AttachFile(p)
	}
	return nil
}

// boardFileJSON is a file of board files --json.
type boardFileJSON struct {
	Kind string `json:"kind"` // download or attachment
	board.File
}

func boardFiles(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "files takes one task id, got %d arguments", fs.NArg())
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Get(ctx, fs.Arg(0))
	if err != nil {
		return notFoundHint(err)
	}
	var files []boardFileJSON
	if r.Result != nil {
		for _, f := range r.Result.Downloads {
			files = append(files, boardFileJSON{"download", f})
		}
	}
	for _, f := range r.Task.Attachments {
		files = append(files, boardFileJSON{"attachment", f})
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, files)
	}
	if len(files) == 0 {
		fmt.Fprintf(cli.Stderr, "surf: task %s has no files (it is %s)\n", r.Task.ID, r.State)
		return nil
	}
	w := tabwriter.NewWriter(cli.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tNAME\tSIZE\tSHA256\tPATH")
	for _, f := range files {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", f.Kind, termsafe.Lines(f.Name), f.Size, f.SHA256, termsafe.Lines(f.Path))
	}
	return w.Flush()
}

func boardGet(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	out := fs.StringP("output", "o", "", "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef(c, "get takes a task id and a file name, got %d arguments", fs.NArg())
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Get(ctx, fs.Arg(0))
	if err != nil {
		return notFoundHint(err)
	}
	f, err := r.FindFile(fs.Arg(1))
	if err != nil {
		return withHint(err, "'surf board files "+r.Task.ID+"' lists them")
	}
	switch *out {
	case "-":
		return b.ReadFile(ctx, f, cli.Stdout)
	case "":
		if err := board.CheckFileName(f.Name); err != nil { // it names a local file
			return withHint(err, "give -o FILE")
		}
		if _, err := os.Lstat(f.Name); err == nil || !errors.Is(err, os.ErrNotExist) {
			return withHint(fmt.Errorf("%s is there already", f.Name), "give -o FILE to write it elsewhere, or over it")
		}
		*out = f.Name
	}
	return writeBoardFile(ctx, b, f, *out)
}

// writeBoardFile writes f to dst through a temporary file beside it: dst
// is replaced only by a whole, checked copy.
func writeBoardFile(ctx context.Context, b *board.Board, f board.File, dst string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".surf-get-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := b.ReadFile(ctx, f, tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
