// The config's one check and its one rendering, shared by the streaming config frame and
// the batch `config` field: the same rule and the same words for both.
import { InputError } from '../errors/index.js';
import { BatchConfigSchema, type SessionConfig } from './config.js';

/**
 * Validate a config and render it as the service takes it: `default`, or the BatchConfig as
 * JSON. Throws InputError (`invalid_config`) naming the offending path, e.g.
 * `invalid config at stt.custom_terms.3.term: term must not be empty`, with every issue in `detail`.
 */
export function configText(config: SessionConfig | undefined): string {
  if (config === undefined || config === 'default') return 'default';
  const parsed = BatchConfigSchema.safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.join('.');
    throw new InputError('invalid_config', `invalid config at ${path || '(root)'}: ${issue.message}`, { path, detail: parsed.error.issues });
  }
  return JSON.stringify(parsed.data);
}
