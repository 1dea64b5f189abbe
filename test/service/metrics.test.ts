// The service's one registry: each attached server's figures read at the scrape, summed over
// servers of one name and (AggregatorRegistry) over workers, a dead worker's counters kept; the
// operator's endpoints over a real HTTP server.
import { describe, expect, it } from 'vitest';
import { ServiceLifecycle } from '../../src/service/lifecycle.js';
import { countersOnly, createServiceRegistry } from '../../src/service/metrics.js';
import { opsAnswer, startOpsServer } from '../../src/service/opsHttp.js';
import type { ServiceMetric } from '../../src/service/metric.js';

const counter = (name: string, read: () => number, labels?: Record<string, string>): ServiceMetric => ({
  name,
  help: name,
  type: 'counter',
  ...(labels ? { labels: Object.keys(labels) } : {}),
  samples: () => [{ ...(labels ? { labels } : {}), value: read() }],
});

const value = (text: string, line: string): number => Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);

describe('createServiceRegistry', () => {
  it("reads each server's figures at the scrape; two servers reporting one name add up; the life cycle's state is there", async () => {
    const l = new ServiceLifecycle();
    let a = 3;
    l.attach({ inFlight: 0, stopAccepting: () => undefined, endCalls: () => undefined, metrics: () => [counter('svc_stream_test_total', () => a, { source: 'rtp' })] });
    l.attach({ inFlight: 0, stopAccepting: () => undefined, endCalls: () => undefined, metrics: () => [counter('svc_stream_test_total', () => 4, { source: 'rtp' })] });
    const registry = await createServiceRegistry(l);
    let text = await registry.text();
    expect(value(text, 'svc_stream_test_total{source="rtp"}')).toBe(7);
    expect(value(text, 'svc_stream_ready')).toBe(0);
    expect(value(text, 'svc_stream_service_state{state="starting"}')).toBe(1);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
    a = 10;
    l.ready();
    text = await registry.text();
    expect(value(text, 'svc_stream_test_total{source="rtp"}')).toBe(14);
    expect(value(text, 'svc_stream_ready')).toBe(1);
    registry.close();
  });

  it("sums workers' registries with its own (AggregatorRegistry); a dead worker's counters stay, its gauges go", async () => {
    const worker = async (calls: number, active: number) => {
      const l = new ServiceLifecycle();
      l.attach({
        inFlight: 0,
        stopAccepting: () => undefined,
        endCalls: () => undefined,
        metrics: () => [counter('svc_stream_calls_started_total', () => calls), { name: 'svc_stream_calls_active', help: 'a', type: 'gauge', samples: () => [{ value: active }] }],
      });
      const r = await createServiceRegistry(l, { serviceState: false });
      const json = await r.json();
      r.close();
      return json;
    };
    const live = await worker(5, 2);
    const dead = countersOnly(await worker(7, 3));
    const primary = await createServiceRegistry(new ServiceLifecycle());
    const text = await primary.text([live, dead]);
    expect(value(text, 'svc_stream_calls_started_total')).toBe(12);
    expect(value(text, 'svc_stream_calls_active')).toBe(2);
    primary.close();
  });

  it('leaves out the families it is told to (a worker does not count the calls its primary counts)', async () => {
    const l = new ServiceLifecycle();
    l.attach({ inFlight: 0, stopAccepting: () => undefined, endCalls: () => undefined, metrics: () => [counter('svc_stream_calls_started_total', () => 1), counter('svc_stream_other_total', () => 1)] });
    const r = await createServiceRegistry(l, { serviceState: false, exclude: ['svc_stream_calls_started_total'] });
    const names = (await r.json()).map((f) => f.name);
    expect(names).toContain('svc_stream_other_total');
    expect(names).not.toContain('svc_stream_calls_started_total');
    r.close();
  });
});

describe('the operator endpoints', () => {
  it('/healthz 200, /readyz 200 or 503 with the reason, /metrics in the text format; anything else 404', async () => {
    const l = new ServiceLifecycle();
    const registry = await createServiceRegistry(l);
    const ops = await startOpsServer('127.0.0.1', 0, (path) => opsAnswer(path, { readiness: () => l.readiness, metrics: async () => ({ contentType: registry.contentType, text: await registry.text() }) }));
    const get = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${ops.port}${path}`);
      return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
    };
    try {
      expect(await get('/healthz')).toMatchObject({ status: 200 });
      expect(await get('/readyz')).toMatchObject({ status: 503, body: '{"ready":false,"reason":"starting"}\n' });
      l.ready();
      expect(await get('/readyz')).toMatchObject({ status: 200, body: '{"ready":true}\n' });
      const m = await get('/metrics');
      expect(m.status).toBe(200);
      expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(m.body).toMatch(/^# TYPE svc_stream_ready gauge$/m);
      expect((await get('/other')).status).toBe(404);
      l.drain('signal');
      expect(await get('/readyz')).toMatchObject({ status: 503, body: '{"ready":false,"reason":"stopped"}\n' });
    } finally {
      await ops.close();
      registry.close();
    }
  });
});
