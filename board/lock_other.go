//go:build !unix

package board

import (
	"errors"
	"os"
)

func tryLock(*os.File) (bool, error) {
	return false, errors.New("the embedded board server needs a Unix system here; point the board at a NATS server instead (--nats URL)")
}

func unlock(*os.File) {}
