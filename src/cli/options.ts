// The command line's one option parser: each command declares its options as a table (what is
// typed, the help line, how the value is read and checked), and one function parses argv
// against it, one renders the aligned help. A value is checked where it is parsed, so a bad
// one is refused, naming its flag, before the command starts anything.
import { parseArgs } from 'node:util';
import { InputError } from '../errors/index.js';

/** One option of a command: how it is typed, its help line, and how its value is read. */
export interface CliOption<T> {
  readonly type: 'string' | 'boolean';
  /** Repeatable (`--origin A --origin B`): `read` is given every value, in order. */
  readonly multiple?: boolean | undefined;
  /** A one-letter alias (`h` for `-h`). */
  readonly short?: string | undefined;
  /** The value's placeholder in the help (`N`, `FILE`); string options only. */
  readonly value?: string | undefined;
  /** The help text; a second line and more are indented under the first. */
  readonly help: string;
  /**
   * The option's value from what was typed: `undefined` when it is absent, the string (or
   * `true`, or every string of a repeatable option) otherwise. Throws `InputError`
   * (`invalid_argument`) naming `flag` for a value it refuses.
   */
  readonly read: (raw: string | boolean | string[] | undefined, flag: string) => T;
}

/** A command's options by name (the name is the flag without `--`). */
export type OptionTable = Readonly<Record<string, CliOption<unknown>>>;

/** What {@link parseOptions} gives for a table: each option's value as its `read` returns it. */
export type OptionValues<S extends OptionTable> = { -readonly [K in keyof S]: S[K] extends CliOption<infer T> ? T : never };

/** The `invalid_argument` error of a flag whose value is refused. */
export function flagError(flag: string, expected: string, got: string): InputError {
  return new InputError('invalid_argument', `${flag} expects ${expected}, got '${got}'`, { path: flag.replace(/^-+/, '') });
}

interface Bounds<F> {
  /** The smallest value accepted. */
  readonly min?: number | undefined;
  /** The largest value accepted. */
  readonly max?: number | undefined;
  /** Values must be above this (`speed`: above 0). */
  readonly above?: number | undefined;
  /** The value when the option is absent. */
  readonly fallback?: F;
}

function describe(integer: boolean, b: Bounds<unknown>): string {
  const what = integer ? 'an integer' : 'a number';
  if (b.above !== undefined) return `${what} > ${b.above}`;
  if (b.min !== undefined && b.max !== undefined) return `${what} from ${b.min} to ${b.max}`;
  if (b.min !== undefined) return `${what} ≥ ${b.min}`;
  return what;
}

function numeric(integer: boolean, value: string, help: string, b: Bounds<number | undefined>): CliOption<number | undefined> {
  return {
    type: 'string',
    value,
    help,
    read: (raw, flag) => {
      if (raw === undefined) return b.fallback;
      const text = String(raw);
      const n = Number(text);
      const ok =
        text.trim() !== '' &&
        Number.isFinite(n) &&
        (!integer || Number.isInteger(n)) &&
        (b.min === undefined || n >= b.min) &&
        (b.max === undefined || n <= b.max) &&
        (b.above === undefined || n > b.above);
      if (!ok) throw flagError(flag, describe(integer, b), text);
      return n;
    },
  };
}

/** The option builders every command uses. */
export const option = {
  /** A switch: `true` when given, `false` when not. */
  flag(help: string, short?: string): CliOption<boolean> {
    return { type: 'boolean', help, ...(short ? { short } : {}), read: (raw) => raw === true };
  },
  /** A string as typed (`undefined` when absent, unless a fallback is given). */
  text: text as {
    (value: string, help: string): CliOption<string | undefined>;
    (value: string, help: string, fallback: string): CliOption<string>;
  },
  /** An integer within bounds. */
  integer: ((value: string, help: string, bounds: Bounds<number | undefined> = {}) => numeric(true, value, help, bounds)) as {
    (value: string, help: string, bounds?: Bounds<undefined>): CliOption<number | undefined>;
    (value: string, help: string, bounds: Bounds<number> & { readonly fallback: number }): CliOption<number>;
  },
  /** A number within bounds (`--speed 1.5`). */
  number: ((value: string, help: string, bounds: Bounds<number | undefined> = {}) => numeric(false, value, help, bounds)) as {
    (value: string, help: string, bounds?: Bounds<undefined>): CliOption<number | undefined>;
    (value: string, help: string, bounds: Bounds<number> & { readonly fallback: number }): CliOption<number>;
  },
  /** One of a few words. */
  choice<const C extends string>(value: string, choices: readonly C[], help: string, fallback: C): CliOption<C> {
    return {
      type: 'string',
      value,
      help,
      read: (raw, flag) => {
        if (raw === undefined) return fallback;
        if (!(choices as readonly string[]).includes(String(raw))) throw flagError(flag, choices.join(' or '), String(raw));
        return raw as C;
      },
    };
  },
  /** Repeatable: every value given, in order (none: `[]`), each read by `each`. */
  list<T = string>(value: string, help: string, each: (raw: string, flag: string) => T = (raw) => raw as T): CliOption<T[]> {
    return { type: 'string', multiple: true, value, help, read: (raw, flag) => ((raw as string[] | undefined) ?? []).map((r) => each(r, flag)) };
  },
  /** A string read by `read` (which is given `undefined` when the option is absent). */
  custom<T>(value: string, help: string, read: (raw: string | undefined, flag: string) => T): CliOption<T> {
    return { type: 'string', value, help, read: (raw, flag) => read(raw as string | undefined, flag) };
  },
};

function text(value: string, help: string, fallback?: string): CliOption<string | undefined> {
  return { type: 'string', value, help, read: (raw) => (raw === undefined ? fallback : String(raw)) };
}

/** `-h, --help`, which every command has. */
export const HELP_OPTION = { help: option.flag('this help', 'h') } as const;

/** The parsed command line: every option's value, and the positional arguments. */
export interface ParsedOptions<S extends OptionTable> {
  readonly values: OptionValues<S>;
  readonly positionals: string[];
}

/**
 * Parse `argv` against `table`: unknown options, a missing value, and (unless `positionals`)
 * any positional argument throw Node's `ERR_PARSE_ARGS_*` errors, which the CLI words as
 * usage mistakes (src/cli/usage.ts); each option's value is then read by its `read`, so a
 * refused value throws `InputError('invalid_argument')` naming its flag. Nothing else runs.
 */
export function parseOptions<S extends OptionTable>(argv: readonly string[], table: S, positionals = false): ParsedOptions<S> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
  for (const [name, o] of Object.entries(table)) options[name] = { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) };
  const parsed = parseArgs({ args: [...argv], options, allowPositionals: positionals, strict: true });
  const values = {} as Record<string, unknown>;
  const raw = parsed.values as Record<string, string | boolean | string[] | undefined>;
  // --help wins over every other value: a person asking for help gets it.
  if (raw['help'] === true && 'help' in table) return { values: { help: true } as OptionValues<S>, positionals: parsed.positionals };
  for (const [name, o] of Object.entries(table)) values[name] = o.read(raw[name], `--${name}`);
  return { values: values as OptionValues<S>, positionals: parsed.positionals };
}

/** The longest `  --flag VALUE` that shares a line with its help; longer ones put the help below. */
const MAX_COLUMN = 24;

/** The help lines of a table, aligned in one column (`  --port N          port …`). */
export function optionsHelp(table: OptionTable): string {
  const heads = Object.entries(table).map(([name, o]) => `  ${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' && o.value ? ` ${o.value}` : ''}`);
  const column = Math.min(MAX_COLUMN, Math.max(...heads.map((h) => h.length)) + 2);
  const indent = ' '.repeat(column);
  return Object.values(table)
    .map((o, i) => {
      const head = heads[i]!;
      const [first, ...rest] = o.help.split('\n');
      const lines = head.length + 1 < column ? [`${head.padEnd(column)}${first}`] : [head, `${indent}${first}`];
      return [...lines, ...rest.map((l) => `${indent}${l.trimStart()}`)].join('\n');
    })
    .join('\n');
}
