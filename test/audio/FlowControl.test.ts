// FlowControl as a gate that follows other gates: a source shared by several consumers is
// paused while any of them is, wakes when the last one resumes, and lets go of a consumer
// that detaches.
import { describe, expect, it } from 'vitest';
import { FlowControl } from 'svc-stream';

/** Whether `p` settled after the microtasks queued so far ran. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('FlowControl.follow', () => {
  it('a gate is paused while any gate it follows is, and ready() waits for the last to resume', async () => {
    const gate = new FlowControl();
    const a = new FlowControl();
    const b = new FlowControl();
    gate.follow(a);
    gate.follow(b);
    expect(a.connected && b.connected).toBe(true);
    expect(gate.paused).toBe(false);
    a.pause();
    b.pause();
    expect(gate.paused).toBe(true);
    const ready = gate.ready();
    a.resume();
    expect(await settled(ready)).toBe(false);
    b.resume();
    expect(await settled(ready)).toBe(true);
  });

  it('unfollowing or detaching a paused leader releases the follower', async () => {
    const gate = new FlowControl();
    const a = new FlowControl();
    const unfollow = gate.follow(a);
    a.pause();
    const first = gate.ready();
    unfollow();
    expect(await settled(first)).toBe(true);
    expect(a.connected).toBe(false);

    gate.follow(a);
    const second = gate.ready();
    a.detach();
    expect(await settled(second)).toBe(true);
    expect(gate.paused).toBe(false);
  });

  it('its own pause still holds while the leaders flow', () => {
    const gate = new FlowControl();
    gate.follow(new FlowControl());
    gate.pause();
    expect(gate.paused).toBe(true);
    gate.release();
    expect(gate.paused).toBe(false);
  });
});
