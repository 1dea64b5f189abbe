// `svc-stream sip` called by a real softphone: baresip dials it with a wav file as its audio
// source (aufile), and hangs up when the file ends.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { killSpawned, spawned } from '../../cli/spawned.js';
import { SAMPLE_WAV } from '../helpers.js';

const BIN = new URL('../../../bin/svc-stream.js', import.meta.url).pathname;
afterEach(killSpawned);

it('baresip places a call with a wav file as its audio: one session, done with the file’s duration', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-baresip-'));
  try {
    const wav = join(dir, 'call8k.wav');
    execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-i', SAMPLE_WAV, '-t', '3', '-ar', '8000', '-ac', '1', '-c:a', 'pcm_s16le', wav]);
    const sipPort = 46000 + Math.floor(Math.random() * 1000);
    writeFileSync(
      join(dir, 'config'),
      [
        'poll_method epoll',
        `sip_listen 127.0.0.1:${sipPort}`,
        'sip_transports udp',
        `audio_source aufile,${wav}`,
        `audio_player aufile,${join(dir, 'heard.wav')}`,
        `audio_alert aufile,${join(dir, 'heard.wav')}`,
        'ausrc_srate 8000',
        'ausrc_channels 1',
        'module_path /usr/lib/baresip/modules',
        'module stdio.so',
        'module g711.so',
        'module aufile.so',
        'module_app account.so',
        'module_app menu.so',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'accounts'), '<sip:baresip@127.0.0.1>;regint=0;audio_codecs=PCMU/8000/1\n');
    const sip = spawned(process.execPath, [BIN, 'sip', '--port', '0', '--rtp-ports', '45200-45299', '--exit-after', '1', '--json'], { env: { PATH: process.env['PATH'] }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    sip.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      sip.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /SIP on 127\.0\.0\.1:(\d+)/.exec(err);
        if (m) resolve(Number(m[1]));
      });
      sip.on('exit', () => reject(new Error(err)));
    });
    const exited = new Promise<number | null>((r) => sip.on('exit', (code) => r(code)));
    const phone = spawned('baresip', ['-f', dir, '-e', `/dial sip:analytics@127.0.0.1:${port}`, '-t', '15'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    phone.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    phone.on('error', (e) => (log += `baresip could not start (${e.message}): install Debian's baresip (.ci/run does)`));
    expect(await exited, `${err}\n${log.slice(-2000)}`).toBe(0);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const call = lines.find((l) => l['type'] === 'call')!;
    expect(call).toMatchObject({ codec: 'PCMU', metadata: { kind: 'sip', from: { uri: 'sip:baresip@127.0.0.1' } } });
    expect(lines.find((l) => l['type'] === 'sip_end')).toMatchObject({ reason: 'bye' });
    const end = lines.find((l) => l['type'] === 'call_end')!;
    expect(end).toMatchObject({ status: 'done', stats: { lost: 0 } });
    // The file is 3 s; baresip sends a packet or a few past its end (the source's last, partial
    // frame padded; its packetiser's timer running on until the hangup on a loaded machine).
    expect(end['duration_ms']).toBeGreaterThanOrEqual(3000);
    expect(end['duration_ms']).toBeLessThanOrEqual(3100);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
