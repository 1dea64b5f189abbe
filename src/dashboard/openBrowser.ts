// Opening a URL in the user's browser: the platform's opener, detached, best effort, and an
// honest answer when nothing could be opened (no display, no opener, the opener failed).
import { spawn } from 'node:child_process';

/** How long an opener may run before it is taken to have opened the browser itself. */
const OPENER_GRACE_MS = 3_000;

/**
 * Ask the platform to open `url` (`open` on macOS, `cmd /c start` on Windows, `xdg-open`
 * elsewhere).
 *
 * - Resolves true when the opener exited 0, or was still running after 3 s (some openers
 *   stay in the foreground with the browser).
 * - Resolves false when no browser can be opened: on Linux and the BSDs without `DISPLAY` or
 *   `WAYLAND_DISPLAY` (a server or an SSH session, where `xdg-open` would start a text browser
 *   on the terminal), when the opener is missing, or when it exited with a failure (`xdg-open`
 *   exits 3 when it finds no browser).
 * - Never throws; never waits for the browser to close.
 */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (platform !== 'darwin' && platform !== 'win32' && !env['DISPLAY'] && !env['WAYLAND_DISPLAY']) return Promise.resolve(false);
  const [cmd, args] =
    platform === 'darwin' ? ['open', [url]] : platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd, args as string[], { detached: true, stdio: 'ignore', windowsHide: true, env });
      const grace = setTimeout(() => {
        child.unref();
        resolve(true);
      }, OPENER_GRACE_MS);
      grace.unref();
      child.once('error', () => {
        clearTimeout(grace);
        resolve(false);
      });
      child.once('exit', (code) => {
        clearTimeout(grace);
        resolve(code === 0);
      });
    } catch {
      resolve(false);
    }
  });
}
