// How the command line words a usage mistake, once for every command: Node's parseArgs errors
// become plain sentences ("unknown option --sped (did you mean --speed?)"), followed by the
// command's usage line.

/** The options a usage text documents (`--speed`, `-h`, …), read from its option lines. */
export function documentedOptions(usage: string): string[] {
  return [...new Set([...usage.matchAll(/(?:^|[\s,])(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!))];
}

/** Edit distance, for suggestions; small strings only. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** The documented option closest to `given`, when it is close enough to be a typo. */
export function suggestOption(given: string, options: readonly string[]): string | undefined {
  const bare = given.replace(/=.*$/, '');
  let best: { option: string; d: number } | undefined;
  for (const option of options) {
    const d = option.startsWith(bare) && bare.length > 3 ? 0 : distance(bare, option);
    if (best === undefined || d < best.d) best = { option, d };
  }
  return best && best.d <= Math.max(2, Math.floor(bare.length / 4)) ? best.option : undefined;
}

/**
 * Node's `parseArgs` errors (`ERR_PARSE_ARGS_*`) as one plain sentence; any other error's
 * message unchanged.
 */
export function argsErrorMessage(err: unknown, usage: string): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  switch (e?.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const option = /Unknown option '([^']+)'/.exec(message)?.[1] ?? message;
      const hint = suggestOption(option, documentedOptions(usage));
      return `unknown option ${option}${hint ? ` (did you mean ${hint}?)` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const option = /Option '(-[^' ]+)/.exec(message)?.[1] ?? '';
      return /argument missing/.test(message) ? `option ${option} needs a value` : /does not take an argument/.test(message) ? `option ${option} takes no value` : message;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const arg = /Unexpected argument '([^']*)'/.exec(message)?.[1];
      return arg === undefined ? message : `unexpected argument '${arg}'`;
    }
    default:
      return message;
  }
}

/** The lines after a usage error: the command's usage line and where its options are listed. */
export function usageHint(name: string, usage: string): string {
  const head = usage.split(/\n\s*\n/, 1)[0]!.trimEnd();
  return `${head}\nRun 'svc-stream ${name} --help' for every option.`;
}

/** Whether `err` is a usage mistake: a parseArgs error or an `invalid_argument` input error. */
export function isUsageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'invalid_argument' || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'));
}

/** Print a usage mistake the one way (`svc-stream: invalid_argument: …`, then the usage line); the exit status, 2. */
export function reportUsageError(stderr: { write(text: string): unknown }, name: string, usage: string, err: unknown): number {
  stderr.write(`svc-stream: invalid_argument: ${argsErrorMessage(err, usage).split('\n')[0]}\n${usageHint(name, usage)}\n`);
  return 2;
}
