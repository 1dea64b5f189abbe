// The one chunk grouper (src/audio/ChunkLog.ts), stepped through tables: appends (fresh or
// copied), reads by position (frames of up to N bytes, exact slices), trims; and what is
// copied: a fresh chunk never on append, a copied chunk once, a block never again.
import { describe, expect, it } from 'vitest';
import { ChunkLog } from '../../src/audio/ChunkLog.js';

/** `n` bytes counting up from `from` (mod 256), so any misplaced byte shows. */
const bytes = (n: number, from = 0): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (from + i) & 0xff);

/** The bytes `from..from+n` of the stream the steps wrote (each append continues the count). */
const expected = (from: number, n: number): number[] => Array.from(bytes(n, from));

type Step =
  | { append: number; fresh?: boolean }
  | { frame: [pos: number, max: number]; len: number; view?: boolean }
  | { slice: [pos: number, n: number]; view?: boolean }
  | { trim: number; start: number; segments: number }
  | { skip: number };

interface Case {
  readonly name: string;
  readonly blockBytes?: number;
  readonly steps: readonly Step[];
  readonly end: number;
}

const CASES: Case[] = [
  {
    name: 'fresh chunks: a frame within one chunk is a view of it; a full chunk is the chunk itself',
    steps: [{ append: 100, fresh: true }, { append: 100, fresh: true }, { frame: [0, 100], len: 100, view: true }, { frame: [150, 100], len: 50, view: true }],
    end: 200,
  },
  {
    name: 'copied chunks pack into one block: frames are views of the block, up to the block end',
    blockBytes: 256,
    steps: [{ append: 100 }, { append: 100 }, { append: 100 }, { frame: [0, 1000], len: 256, view: true }, { frame: [256, 1000], len: 44, view: true }],
    end: 300,
  },
  {
    name: 'small fresh chunks (under max / 8) are grouped into one frame of up to max (their one copy)',
    steps: [...Array.from({ length: 20 }, () => ({ append: 160, fresh: true }) as const), { frame: [0, 2000], len: 2000, view: false }, { frame: [2000, 2000], len: 1200, view: false }],
    end: 3200,
  },
  {
    name: 'a large fresh chunk is never grouped: the frame stops at its end',
    steps: [{ append: 900, fresh: true }, { append: 50, fresh: true }, { frame: [0, 1000], len: 900, view: true }, { frame: [900, 1000], len: 50, view: true }],
    end: 950,
  },
  {
    name: 'exact slices: a view inside one segment, one copy across segments',
    steps: [{ append: 300, fresh: true }, { append: 300, fresh: true }, { slice: [0, 160], view: true }, { slice: [160, 160], view: false }, { slice: [320, 160], view: true }],
    end: 600,
  },
  {
    name: 'exact frames over copied chunks in blocks of a multiple of the frame: always views',
    blockBytes: 640,
    steps: [{ append: 500 }, { append: 500 }, { append: 500 }, { slice: [0, 320], view: true }, { slice: [320, 320], view: true }, { slice: [640, 320], view: true }, { slice: [960, 320], view: true }],
    end: 1500,
  },
  {
    name: 'trim drops whole segments ending at or before the position',
    steps: [{ append: 100, fresh: true }, { append: 100, fresh: true }, { append: 100, fresh: true }, { trim: 150, start: 100, segments: 2 }, { trim: 200, start: 200, segments: 1 }, { frame: [200, 50], len: 50, view: true }],
    end: 300,
  },
  {
    name: 'the open block stays while it has room, and keeps filling after a trim',
    blockBytes: 256,
    steps: [{ append: 100 }, { trim: 100, start: 0, segments: 1 }, { append: 100 }, { frame: [100, 1000], len: 100, view: true }, { trim: 300, start: 0, segments: 1 }],
    end: 200,
  },
  {
    name: 'skip moves the end over bytes never kept; later appends continue from there',
    steps: [{ append: 100 }, { skip: 50 }, { append: 30, fresh: true }, { frame: [150, 100], len: 30, view: true }],
    end: 180,
  },
  {
    name: 'reads go back (a resumed session): any held position reads right',
    steps: [{ append: 300, fresh: true }, { append: 300 }, { frame: [500, 64], len: 64 }, { frame: [10, 64], len: 64, view: true }, { slice: [290, 20], view: false }],
    end: 600,
  },
];

describe('ChunkLog (table)', () => {
  it.each(CASES)('$name', ({ steps, blockBytes, end }) => {
    const log = new ChunkLog(blockBytes !== undefined ? { blockBytes } : {});
    const appended: Uint8Array[] = [];
    let at = 0;
    for (const step of steps) {
      if ('append' in step) {
        const chunk = bytes(step.append, at);
        appended.push(chunk);
        log.append(chunk, step.fresh === true);
        at += step.append;
      } else if ('skip' in step) {
        log.skip(step.skip);
        at += step.skip;
      } else if ('trim' in step) {
        log.trim(step.trim);
        expect(log.start).toBe(step.start);
        expect(log.segments).toBe(step.segments);
      } else {
        const [pos, n] = 'frame' in step ? step.frame : step.slice;
        const out = 'frame' in step ? log.frame(pos, n) : log.slice(pos, n);
        const len = 'frame' in step ? step.len : n;
        expect(out.byteLength).toBe(len);
        expect(Array.from(out)).toEqual(expected(pos, len));
        // A view is the memory the log holds (an input chunk's, or a block's: the same memory
        // read twice); a copy is new memory each time, and never an input chunk's.
        const sharesInput = appended.some((c) => c.buffer === out.buffer);
        const again = 'frame' in step ? log.frame(pos, n) : log.slice(pos, n);
        const same = again.buffer === out.buffer && again.byteOffset === out.byteOffset;
        if (step.view === true) expect(sharesInput || same).toBe(true);
        if (step.view === false) expect(sharesInput || same).toBe(false);
      }
    }
    expect(log.end).toBe(end);
  });

  it('a fresh chunk is kept by reference (never copied on append); a copied chunk is not the caller’s buffer', () => {
    const log = new ChunkLog();
    const fresh = bytes(100);
    log.append(fresh, true);
    expect(log.frame(0, 1000)).toBe(fresh);
    const reused = bytes(100, 100);
    log.append(reused, false);
    reused.fill(0); // the source writes its buffer again: the log's copy is untouched
    expect(Array.from(log.frame(100, 1000))).toEqual(expected(100, 100));
  });

  it('a block is never copied again: frames of a block are views into the same memory', () => {
    const log = new ChunkLog({ blockBytes: 1024 });
    for (let i = 0; i < 8; i++) log.append(bytes(100, i * 100), false);
    const a = log.frame(0, 300);
    const b = log.frame(300, 1000);
    expect(a.buffer).toBe(b.buffer);
    expect(b.byteLength).toBe(500);
  });

  it('trims in O(1) amortized: a long log trimmed as it goes holds a bounded number of segments', () => {
    const log = new ChunkLog();
    const chunks = Array.from({ length: 16 }, (_, i) => bytes(160, i * 160));
    for (let i = 0; i < 100_000; i++) {
      log.append(chunks[i % 16]!, true);
      if (i % 10 === 9) log.trim(log.end - 1600);
    }
    expect(log.segments).toBeLessThanOrEqual(20);
    expect(Array.from(log.slice(log.end - 320, 320))).toEqual(expected(log.end - 320, 320));
  });

  it('refuses a read of bytes it does not hold', () => {
    const log = new ChunkLog();
    log.append(bytes(100), true);
    log.append(bytes(100, 100), true);
    log.trim(100);
    expect(() => log.frame(50, 10)).toThrow(RangeError);
    expect(() => log.frame(200, 10)).toThrow(RangeError);
    expect(() => log.slice(150, 100)).toThrow(RangeError);
  });

  it('with recycle, blocks trimmed away come back for later appends (a reader that never keeps a view)', () => {
    const log = new ChunkLog({ blockBytes: 256, recycle: true });
    log.append(bytes(256), false);
    const first = log.frame(0, 256);
    log.append(bytes(10, 256), false);
    log.trim(256);
    log.append(bytes(300, 266), false);
    // The block that held 0..256 now holds later bytes: the same memory, other contents.
    const later = log.frame(266, 246);
    expect(later.buffer).toBe(first.buffer);
    expect(Array.from(later)).toEqual(expected(266, 246));
    // Without recycle, a trimmed block is never written again.
    const kept = new ChunkLog({ blockBytes: 256 });
    kept.append(bytes(256), false);
    const view = kept.frame(0, 256);
    kept.append(bytes(10, 256), false);
    kept.trim(256);
    kept.append(bytes(300, 266), false);
    expect(Array.from(view)).toEqual(expected(0, 256));
  });
});

describe('ChunkLog write and commit (a writer that groups into frames)', () => {
  it('readers see nothing past the end: written bytes become readable as they are committed, a frame at a time', () => {
    const log = new ChunkLog({ blockBytes: 1000 });
    for (let k = 0; k < 4; k++) log.write(bytes(160, k * 160));
    expect(log.end).toBe(0);
    expect(log.written).toBe(640);
    expect(() => log.frame(0, 100)).toThrow(RangeError);
    log.commit(480);
    expect(log.end).toBe(480);
    // A frame stops at the end, though its block holds more.
    expect(Array.from(log.frame(0, 64 * 1024))).toEqual(expected(0, 480));
    expect(() => log.slice(400, 100)).toThrow(RangeError);
    // The end never moves back; nothing past what was written is committed.
    log.commit(100);
    expect(log.end).toBe(480);
    expect(() => log.commit(641)).toThrow(RangeError);
    // Across blocks, and an append after writes commits all of it.
    for (let k = 4; k < 8; k++) log.write(bytes(160, k * 160));
    log.commit(1120);
    expect(Array.from(log.slice(480, 640))).toEqual(expected(480, 640));
    log.append(bytes(40, 1280), false);
    expect(log.end).toBe(1320);
    expect(Array.from(log.slice(0, 1320))).toEqual(expected(0, 1320));
  });

  it('a trim never drops bytes written and not committed; uncommitted() copies them; skip and clear drop them', () => {
    const log = new ChunkLog({ blockBytes: 320, recycle: true });
    log.write(bytes(320));
    log.write(bytes(200, 320));
    log.commit(320);
    log.trim(320);
    expect(log.written).toBe(520);
    const tail = log.uncommitted();
    expect(Array.from(tail)).toEqual(expected(320, 200));
    // A copy: what the log does with its blocks later does not reach it.
    log.commit(520);
    log.trim(520);
    log.write(bytes(320, 520));
    expect(Array.from(tail)).toEqual(expected(320, 200));
    expect(log.uncommitted().byteLength).toBe(320);
    log.skip(10);
    expect([log.end, log.written, log.uncommitted().byteLength]).toEqual([530, 530, 0]);
    log.write(bytes(30, 530));
    log.clear();
    expect([log.end, log.written]).toEqual([530, 530]);
  });
});
