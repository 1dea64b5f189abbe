// The TypeScript examples of the README and of every docs/**/*.md compile against the
// package as it is: each ```ts block is written out as a module and typechecked with the
// project's settings (exactOptionalPropertyTypes on, as `tsc --init` writes it today).
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

it('every ```ts block of the README and of docs/ typechecks', async () => {
  const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs')).filter((f) => !f.includes(`${join('docs', 'api')}`))];
  const blocks: Array<{ where: string; code: string }> = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/```ts\n([\s\S]*?)```/g)) {
      const line = text.slice(0, m.index).split('\n').length + 1;
      blocks.push({ where: `${relative(root, file)}:${line}`, code: m[1]! });
    }
  }
  expect(blocks.length).toBeGreaterThan(5);
  const dir = join(root, 'test', '.readme-blocks');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    blocks.forEach((b, i) => writeFileSync(join(dir, `block${String(i).padStart(3, '0')}.ts`), `${b.code}\nexport {};\n`));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        compilerOptions: { noEmit: true, noUnusedLocals: false, exactOptionalPropertyTypes: true, rootDir: '../..' },
        include: ['./*.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await new Promise<string>((resolve) =>
      execFile(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { timeout: 60_000 }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`)),
    );
    // Name the document and line of the block, not the temp file, when one fails.
    expect(output.replace(/test\/\.readme-blocks\/block(\d+)\.ts/g, (_m, i: string) => `block at ${blocks[Number(i)]!.where}`)).toBe('');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
