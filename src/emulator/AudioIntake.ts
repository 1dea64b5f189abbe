// Turns the audio bytes of one streaming connection into PCM as they arrive: raw formats and
// PCM WAV are decoded here, other containers by one ffmpeg process per connection.
import { isRawFormat, type AudioFormat, type ContainerFormat } from '../schema/audio.js';
import { DecodeFailure, sniffContainer, StreamingDecoder } from './decode.js';
import { RawPcmDecoder, type PcmBlock } from './pcm.js';
import { parseWavHeader, wavSampleFormat, type WavInfo } from './wav.js';

/** Why audio was refused: `invalid_audio` closes with 4002, `internal` with 1011. */
export class IntakeError extends Error {
  override readonly name = 'IntakeError';
  constructor(
    readonly kind: 'invalid_audio' | 'internal',
    message: string,
  ) {
    super(message);
  }
}

/** Container bytes held while looking for a header before giving up on incremental WAV. */
const MAX_HEAD_BYTES = 1 << 16;

/**
 * One connection's audio intake. Raw formats and PCM/float/G.711 WAV decode synchronously
 * in `push` (so events can follow the audio frame by frame); other containers decode
 * through ffmpeg as the bytes arrive, and their PCM reaches `sink` asynchronously.
 */
export class AudioIntake {
  /** Bytes received. */
  bytes = 0;
  private raw: RawPcmDecoder | undefined;
  private head: Buffer = Buffer.alloc(0);
  private wav: WavInfo | undefined;
  /** Bytes of the WAV data chunk still expected (Infinity when the header did not say). */
  private wavLeft = Infinity;
  private ffmpeg: StreamingDecoder | undefined;
  private ffmpegPcm: RawPcmDecoder | undefined;
  private detected: ContainerFormat | undefined;

  constructor(
    private readonly format: AudioFormat,
    private readonly sink: (block: PcmBlock) => void,
  ) {
    if (isRawFormat(format)) this.raw = new RawPcmDecoder(format.audio_format, format.sample_rate, format.num_channels);
  }

  /** The container detected from the first bytes, once known. */
  get container(): ContainerFormat | undefined {
    return this.detected;
  }

  /** Feed bytes; throws IntakeError when they cannot be audio of the declared kind. */
  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (chunk.length === 0) return;
    if (this.ffmpeg) return this.ffmpeg.write(chunk);
    if (this.raw && !this.wav) return this.emit(this.raw.push(chunk));
    if (this.wav) return this.pushWav(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.head = Buffer.concat([this.head, chunk]);
    this.detect();
  }

  private detect(): void {
    if (this.head.length < 12) return;
    const found = sniffContainer(this.head);
    if (!found) throw new IntakeError('invalid_audio', 'the audio is none of the accepted formats (wav mp3 ogg flac webm aac aiff) and no raw audio_format was given');
    const declared = this.format.audio_format;
    if (declared !== undefined && declared !== found) throw new IntakeError('invalid_audio', `the audio is ${found}, not the declared ${declared}`);
    this.detected = found;
    if (found === 'wav') {
      const info = parseWavHeader(this.head);
      if (!info) {
        if (this.head.length < MAX_HEAD_BYTES) return;
        return this.toFfmpeg(found);
      }
      const sampleFormat = wavSampleFormat(info);
      if (!sampleFormat || info.channels < 1 || info.sampleRate < 1) return this.toFfmpeg(found);
      this.wav = info;
      this.wavLeft = info.dataBytes ?? Infinity;
      this.raw = new RawPcmDecoder(sampleFormat, info.sampleRate, info.channels);
      const body = this.head.subarray(info.dataOffset);
      this.head = Buffer.alloc(0);
      return this.pushWav(body);
    }
    this.toFfmpeg(found);
  }

  private toFfmpeg(format: ContainerFormat): void {
    const pcm = new RawPcmDecoder('s16le', 16_000, 1);
    this.ffmpegPcm = pcm;
    this.ffmpeg = new StreamingDecoder(format, (b) => this.emit(pcm.push(b)), 16_000);
    this.ffmpeg.write(this.head);
    this.head = Buffer.alloc(0);
  }

  private pushWav(b: Buffer): void {
    // Bytes after the data chunk (LIST, id3 chunks) are not audio.
    const take = Math.min(b.length, this.wavLeft);
    this.wavLeft -= take;
    if (take > 0) this.emit(this.raw!.push(b.subarray(0, take)));
  }

  private emit(block: PcmBlock): void {
    if (block.data.length > 0) this.sink(block);
  }

  /** Milliseconds of audio decoded so far. */
  get decodedMs(): number {
    const d = this.ffmpegPcm ?? this.raw;
    return d ? (d.frames / d.sampleRate) * 1000 : 0;
  }

  /**
   * End of audio: resolves once every sample reached the sink. Rejects with IntakeError when
   * the bytes were not decodable audio, or raw audio ended inside a sample frame.
   */
  async end(): Promise<void> {
    if (this.ffmpeg) {
      try {
        await this.ffmpeg.end();
      } catch (err) {
        if (err instanceof DecodeFailure) throw new IntakeError('invalid_audio', err.message);
        throw new IntakeError('internal', (err as Error).message);
      }
      return;
    }
    if (this.raw && !this.wav && this.raw.pendingBytes !== 0) {
      throw new IntakeError('invalid_audio', `the raw audio ended inside a sample frame (${this.raw.pendingBytes} bytes left over)`);
    }
    if (!this.raw && this.head.length > 0) {
      // Too short to be a header, or a WAV header that never completed.
      if (this.head.length >= 12 && this.detected === 'wav') throw new IntakeError('invalid_audio', 'the WAV header never reached its data chunk');
      throw new IntakeError('invalid_audio', 'too few bytes to be audio');
    }
  }

  dispose(): void {
    this.ffmpeg?.dispose();
  }
}
