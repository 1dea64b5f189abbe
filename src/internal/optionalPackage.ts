// The packages a feature needs but the core does not (the fleet's Redis clients): optional peer
// dependencies, imported on first use, with one typed error that says what to install.
import { SvcError } from '../errors/index.js';

/**
 * Import an optional peer dependency `pkg` for `feature` (`load` is `() => import('pkg')`, written
 * out so bundlers see it). When it, or one of `needs` it imports, is not installed, rejects with
 * `SvcError('missing_dependency')` naming every package of `needs` and the npm command; any
 * other load failure says so, with the original error as the cause.
 */
export async function importOptional<T>(pkg: string, feature: string, needs: readonly string[], load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const notFound = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && needs.some((name) => String((err as Error).message).includes(`'${name}'`) || String((err as Error).message).includes(`"${name}"`));
    const what = `${feature} needs ${needs.join(' and ')}`;
    throw new SvcError(
      'missing_dependency',
      notFound ? `${what}: npm install ${needs.join(' ')}` : `${what}, and ${pkg} failed to load: ${(err as Error)?.message ?? String(err)}`,
      { cause: err, retryable: false, detail: { package: pkg, install: needs } },
    );
  }
}
