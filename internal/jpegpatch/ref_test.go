package jpegpatch

import (
	"bytes"
	"sync"
)

// refEncode is Encode as it was before it copied bits (commit a53d471),
// kept word for word but for names and procs standing for GOMAXPROCS: the
// oracle the encoder is checked against.
func refEncode(m *Image, procs int) []byte {
	var buf bytes.Buffer
	buf.Grow(m.w * m.h / 4)
	e := &refEncoder{w: &buf}
	e.bytes(0xFF, 0xD8)
	// DQT: each table in use.
	for tq := 0; tq < 4; tq++ {
		used := false
		for _, c := range m.comps {
			used = used || c.tq == tq
		}
		if !used {
			continue
		}
		e.bytes(0xFF, 0xDB, 0, 67, byte(tq))
		for _, v := range m.quant[tq] {
			e.bytes(byte(v))
		}
	}
	// SOF0.
	nc := len(m.comps)
	e.bytes(0xFF, 0xC0, 0, byte(8+3*nc), 8, byte(m.h>>8), byte(m.h), byte(m.w>>8), byte(m.w), byte(nc))
	for _, c := range m.comps {
		e.bytes(c.id, byte(c.h<<4|c.v), byte(c.tq))
	}
	// DHT: luminance tables as 0, chrominance as 1.
	specs := []struct {
		class, id byte
		s         huffmanSpec
	}{{0, 0, stdHuffman[0]}, {1, 0, stdHuffman[1]}}
	if nc == 3 {
		specs = append(specs, struct {
			class, id byte
			s         huffmanSpec
		}{0, 1, stdHuffman[2]}, struct {
			class, id byte
			s         huffmanSpec
		}{1, 1, stdHuffman[3]})
	}
	for _, sp := range specs {
		n := 2 + 1 + 16 + len(sp.s.value)
		e.bytes(0xFF, 0xC4, byte(n>>8), byte(n), sp.class<<4|sp.id)
		e.w.Write(sp.s.count[:])
		e.w.Write(sp.s.value)
	}
	// The entropy-coded data is cut into segments at restart markers, one
	// per core, encoded in parallel: decoders read restart intervals
	// natively.
	segs := min(max(procs, 1), 4, m.mcusY)
	rowsPer := (m.mcusY + segs - 1) / segs
	segs = (m.mcusY + rowsPer - 1) / rowsPer
	if segs > 1 {
		ri := m.mcusX * rowsPer
		if ri > 0xFFFF {
			segs, rowsPer = 1, m.mcusY
		} else {
			e.bytes(0xFF, 0xDD, 0, 4, byte(ri>>8), byte(ri))
		}
	}
	// SOS.
	e.bytes(0xFF, 0xDA, 0, byte(6+2*nc), byte(nc))
	for i, c := range m.comps {
		t := byte(0x00)
		if i > 0 {
			t = 0x11
		}
		e.bytes(c.id, t)
	}
	e.bytes(0, 63, 0)
	luts := stdLUTs()
	outs := make([][]byte, segs)
	var wg sync.WaitGroup
	for sgi := 0; sgi < segs; sgi++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			se := &refEncoder{out: make([]byte, 0, m.w*m.h/(6*segs)+64)}
			var pred [3]int32
			for my := sgi * rowsPer; my < min((sgi+1)*rowsPer, m.mcusY); my++ {
				for mx := 0; mx < m.mcusX; mx++ {
					for ci := range m.comps {
						c := &m.comps[ci]
						t := 0
						if ci > 0 {
							t = 1
						}
						for j := 0; j < c.v; j++ {
							for i := 0; i < c.h; i++ {
								b := &c.blocks[(my*c.v+j)*c.bw+mx*c.h+i]
								pred[ci] = se.block(b, &luts[2*t], &luts[2*t+1], pred[ci])
							}
						}
					}
				}
			}
			se.emit(0x7F, 7) // pad the last byte with ones
			outs[sgi] = se.out
		}()
	}
	wg.Wait()
	for i, o := range outs {
		if i > 0 {
			e.bytes(0xFF, 0xD0+byte((i-1)%8))
		}
		e.w.Write(o)
	}
	e.bytes(0xFF, 0xD9)
	return buf.Bytes()
}

type refEncoder struct {
	w   *bytes.Buffer
	out []byte
	acc uint64
	n   uint
}

func (e *refEncoder) bytes(b ...byte) { e.w.Write(b) }

// emit appends the low nBits of bits to the entropy-coded data, stuffing
// a zero after every 0xFF byte.
func (e *refEncoder) emit(bits, nBits uint32) {
	e.acc = e.acc<<nBits | uint64(bits)
	e.n += uint(nBits)
	for e.n >= 8 {
		e.n -= 8
		b := byte(e.acc >> e.n)
		if b == 0xFF {
			e.out = append(e.out, 0xFF, 0x00)
		} else {
			e.out = append(e.out, b)
		}
	}
}

func (e *refEncoder) huff(l *huffLUT, v int32) {
	x := l[v]
	e.emit(x&(1<<24-1), x>>24)
}

func (e *refEncoder) huffRLE(l *huffLUT, run, v int32) {
	a, b := v, v
	if a < 0 {
		a, b = -v, v-1
	}
	var nBits uint32
	if a < 0x100 {
		nBits = uint32(bitCount[a])
	} else {
		nBits = 8 + uint32(bitCount[a>>8])
	}
	e.huff(l, run<<4|int32(nBits))
	if nBits > 0 {
		e.emit(uint32(b)&(1<<nBits-1), nBits)
	}
}

func (e *refEncoder) block(b *coefs, dc, ac *huffLUT, prev int32) int32 {
	d := int32(b[0])
	e.huffRLE(dc, 0, d-prev)
	run := int32(0)
	for zig := 1; zig < blockSize; zig++ {
		v := int32(b[zig])
		if v == 0 {
			run++
			continue
		}
		for run > 15 {
			e.huff(ac, 0xF0)
			run -= 16
		}
		e.huffRLE(ac, run, v)
		run = 0
	}
	if run > 0 {
		e.huff(ac, 0x00)
	}
	return d
}
