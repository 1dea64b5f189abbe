// The TypeScript examples of the README and of every docs/**/*.md compile against the
// package as it is: each ```ts block is written out as a module and typechecked with the
// project's settings (exactOptionalPropertyTypes on, as `tsc --init` writes it today).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
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

// --- Relative links: README.md and docs/**/*.md ------------------------------------------
// Every relative link and image points at a file that exists, and every `#anchor` names a
// heading of its target. Links into docs/api/ (generated, not committed) and links with a
// scheme (https:, mailto:) are not checked.

/** Blank out fenced code blocks and inline code, keeping line breaks, so links in code are not links. */
const blank = (s: string): string => s.replace(/[^\n]/g, ' ');

/** The text with fenced code blocks blanked (line numbers kept). */
function withoutFences(text: string): string {
  return text.replace(/^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\2[`~]*[ \t]*$|(?![\s\S]))/gm, blank);
}

/** The text with fenced blocks and code spans blanked: what is left can hold links. */
function withoutCode(text: string): string {
  return withoutFences(text)
    .replace(/(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n)[\s\S])*?(?<!`)\1(?!`)/g, blank); // a code span ends at its paragraph
}

/** GitHub's heading anchor: lower case, punctuation but `-` and `_` dropped, each space a `-`. */
export function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image in a heading keeps its text
    .replace(/<[^>]+>/g, '') // HTML tags
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file defines: one per heading (duplicates get -1, -2, …), plus explicit `id`/`name` attributes. */
function anchorsOf(markdown: string): Set<string> {
  // Headings keep the text of their code spans (GitHub's slug of `` `fn()`: x `` is `fn-x`).
  const lines = withoutFences(markdown).split('\n');
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const add = (text: string): void => {
    const slug = githubSlug(text);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  };
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) add(atx[1] ?? '');
    else if (/^ {0,3}(=+|-+)[ \t]*$/.test(line) && i > 0 && lines[i - 1]!.trim() !== '' && !/^ {0,3}(#|[-*+>|]|\d+[.)])/.test(lines[i - 1]!)) {
      add(lines[i - 1]!);
    }
    for (const m of line.matchAll(/<[a-z][^>]*\s(?:id|name)=["']([^"']+)["']/gi)) anchors.add(m[1]!);
  });
  return anchors;
}

/** Every link and image target of a markdown file with its line: inline `[t](x)`, `![a](x)`, reference definitions `[r]: x`, and HTML `src`/`href`. */
function linksOf(markdown: string): Array<{ line: number; target: string }> {
  const text = withoutCode(markdown);
  const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
  const found: Array<{ line: number; target: string }> = [];
  for (const m of text.matchAll(/\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) {
    found.push({ line: lineOf(m.index), target: m[1]!.replace(/^<|>$/g, '') });
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)) found.push({ line: lineOf(m.index), target: m[1]!.replace(/^<|>$/g, '') });
  for (const m of text.matchAll(/<(?:img|a|source)\s[^>]*?(?:src|href)=["']([^"']*)["']/gi)) found.push({ line: lineOf(m.index), target: m[1]! });
  return found;
}

/** What is wrong with each relative link of `files` (empty when every link resolves). */
export function brokenLinks(files: readonly string[]): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsFor = (file: string): Set<string> => {
    let a = anchorCache.get(file);
    if (!a) anchorCache.set(file, (a = anchorsOf(readFileSync(file, 'utf8'))));
    return a;
  };
  const apiDir = join(root, 'docs', 'api');
  const problems: string[] = [];
  for (const file of files) {
    for (const { line, target } of linksOf(readFileSync(file, 'utf8'))) {
      const where = `${relative(root, file)}:${line}: ${target}`;
      if (target === '') {
        problems.push(`${where}: empty link`);
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto:, …
      const hash = target.indexOf('#');
      const pathPart = safeDecode(hash < 0 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
      const anchor = hash < 0 ? undefined : safeDecode(target.slice(hash + 1));
      const resolved = pathPart === '' ? file : pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(file), pathPart);
      if (resolved === apiDir || resolved.startsWith(`${apiDir}${sep}`)) continue; // generated by `npm run docs`
      if (!resolved.startsWith(root)) {
        problems.push(`${where}: points outside the repository`);
        continue;
      }
      if (!existsSync(resolved)) {
        problems.push(`${where}: ${relative(root, resolved)} does not exist`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md') || !statSync(resolved).isFile()) {
        problems.push(`${where}: #${anchor} on a file that is not markdown`);
        continue;
      }
      if (!anchorsFor(resolved).has(anchor)) problems.push(`${where}: no heading #${anchor} in ${relative(root, resolved)}`);
    }
  }
  return problems;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

it('every relative link of the README and of docs/ points at an existing file and heading', () => {
  // The checker itself: slugs as GitHub makes them, code is not a link.
  expect(githubSlug('Module systems')).toBe('module-systems');
  expect(githubSlug('`svc-stream emulator` --config FILE')).toBe('svc-stream-emulator---config-file');
  expect(githubSlug('Errors & retries (§7.4)')).toBe('errors--retries-74');
  expect(githubSlug('snake_case [link](x.md)')).toBe('snake_case-link');
  expect(linksOf('a `[x](nope.md)` b\n```md\n[y](nope.md)\n```\n[z](yes.md#top "t")').map((l) => l.target)).toEqual(['yes.md#top']);
  expect(anchorsOf('every ```ts block\n\n## Module systems\n\nand ```sh too').has('module-systems')).toBe(true);
  expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\nB\n---\n')]).toEqual(['a', 'a-1', 'b']);

  const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs')).filter((f) => !f.startsWith(`${join(root, 'docs', 'api')}${sep}`))];
  expect(brokenLinks(files)).toEqual([]);
});
