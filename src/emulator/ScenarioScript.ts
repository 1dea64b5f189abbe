// A scenario's script on one connection: its verbatim `steps` sent in order as audio arrives,
// and its `faults` struck once each at their point. What a fault does to the connection goes
// through the connection's sender; a restart goes through the connection itself.
import type { ConnectionSender } from './ConnectionSender.js';
import type { ErrorWireEvent } from './engineEvents.js';
import type { Fault, Scenario, ScenarioStep } from './scenario.js';
import { STREAMING_ERRORS } from './streamingProtocol.js';

/** What the script needs of its connection besides the sender. */
export interface ScriptHost {
  readonly sender: ConnectionSender;
  readonly log: (line: string) => void;
  /** The going-away close of a planned restart. */
  goAway(): void;
  /** A dead peer: no inactivity limit applies any more. */
  silenced(): void;
}

/** The steps and faults of one connection's scenario, each used once. */
export class ScenarioScript {
  private nextStep = 0;
  private readonly faults: Fault[];

  constructor(
    private readonly scenario: Scenario,
    private readonly host: ScriptHost,
  ) {
    this.faults = [...scenario.faults];
  }

  /** Send the next scripted steps, in order, while `ready` allows (verbatim and untyped on purpose: see ScenarioStepSchema). */
  play(ready: (s: ScenarioStep) => boolean): void {
    const steps = this.scenario.steps;
    const sender = this.host.sender;
    while (this.nextStep < steps.length && !sender.stalled && !sender.closed) {
      const step = steps[this.nextStep]!;
      if (!ready(step)) break;
      this.nextStep++;
      if (step.raw !== undefined) sender.send(step.raw);
      else if (step.event !== undefined) sender.send(JSON.stringify(step.event));
    }
  }

  /** Apply the first pending fault for this point; true when one struck. */
  strike(point: Fault['at'], audioMs = 0, clip = 0): boolean {
    const sender = this.host.sender;
    if (sender.closed || sender.stalled) return false;
    const i = this.faults.findIndex(
      (f) => f.at === point && (point !== 'audio' || (f.at_ms ?? 0) <= audioMs) && (point !== 'clip' || (f.clip ?? 0) === clip),
    );
    if (i < 0) return false;
    const fault = this.faults.splice(i, 1)[0]!;
    this.host.log(`fault ${fault.action} at ${point}`);
    switch (fault.action) {
      case 'close': {
        const code = fault.code ?? 1011;
        const error = fault.error === undefined ? (code === 1000 ? null : STREAMING_ERRORS.internal) : fault.error;
        if (error !== null) sender.send(JSON.stringify({ type: 'error', error } satisfies ErrorWireEvent));
        sender.close(code, fault.reason ?? '');
        break;
      }
      case 'drop':
        sender.drop();
        break;
      case 'stall':
        sender.stall();
        break;
      case 'stop_reading':
        sender.stopReading();
        break;
      case 'silence':
        // A dead peer on a live TCP connection (a pulled cable, a NAT that forgot the flow):
        // nothing is read, so ws answers no ping either, nothing is sent, and no FIN or RST.
        sender.stopReading();
        this.host.silenced();
        break;
      case 'restart':
        this.host.goAway();
        break;
      case 'malformed':
        sender.send(fault.frame ?? '{"type": "clip", "clip": {"clip_uuid": 42');
        break;
      case 'oversized':
        sender.send(JSON.stringify({ type: 'summary', text: 'x'.repeat(fault.bytes ?? 17 * 1024 * 1024) }));
        break;
      case 'http':
        // Refusing with an HTTP status happens before the upgrade (see server.ts).
        return false;
    }
    return true;
  }
}
