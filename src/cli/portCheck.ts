// A port a command will listen on, checked before anything starts (no emulator, no worker): a
// port taken is one line naming its flag, exit status 2, not a listen error later.
import dgram from 'node:dgram';
import { createServer } from 'node:net';
import { InputError } from '../errors/index.js';

/** A port that cannot be listened on, as an input error naming its flag (`port_in_use`, exit 2). */
export function portError(flag: string, port: number, cause: NodeJS.ErrnoException, host?: string): InputError {
  const where = host !== undefined ? ` (${host}:${port})` : '';
  const why =
    cause.code === 'EADDRINUSE'
      ? `the port is in use${where}`
      : cause.code === 'EACCES'
        ? `listening on it needs privileges${where}`
        : cause.code === 'EADDRNOTAVAIL'
          ? `the address is on no interface of this machine${where}`
          : `cannot listen on it${where}: ${cause.code ?? cause.message}`;
  return new InputError('port_in_use', `--${flag} ${port}: ${why}`, { path: flag, cause });
}

/** Whether `flag`'s TCP port can be listened on now (port 0 always can); `port_in_use` naming the flag when not. */
export function checkTcpPort(flag: string, host: string, port: number | undefined): Promise<void> {
  if (!port) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => reject(portError(flag, port, err, host)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/** Whether `flag`'s UDP ports (`port`, and `port + i` for each of `count` workers) can be bound now. */
export async function checkUdpPorts(flag: string, host: string, port: number | undefined, count = 1): Promise<void> {
  if (!port) return;
  for (let i = 0; i < count; i++) {
    const p = port + i;
    await new Promise<void>((resolve, reject) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', (err: NodeJS.ErrnoException) => {
        socket.close();
        reject(portError(flag, p, err, host));
      });
      socket.bind({ address: host, port: p, exclusive: true }, () => socket.close(() => resolve()));
    });
  }
}
