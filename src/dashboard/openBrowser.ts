// Opening a URL in the user's browser: the platform's opener, detached, best effort.
import { spawn } from 'node:child_process';

/**
 * Ask the platform to open `url` (`open` on macOS, `cmd /c start` on Windows, `xdg-open`
 * elsewhere). Resolves true once the opener started, false when it could not be run; never
 * throws, never waits for the browser.
 */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const [cmd, args] =
    platform === 'darwin' ? ['open', [url]] : platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd, args as string[], { detached: true, stdio: 'ignore', windowsHide: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
