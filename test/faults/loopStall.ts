// How long the event loop stalled while a test ran, and how much of each stall the main thread
// spent on a CPU (JavaScript, GC on the main thread): a stall the thread was busy through is the
// code's doing; time it waited to be scheduled, on a loaded machine, is the machine's.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoopStalls {
  /** The longest stall between two 10 ms ticks, in ms (as Node measured it, whatever caused it). */
  readonly longestMs: number;
  /**
   * The longest stall the main thread was on a CPU through (the lesser of the gap and the
   * thread's CPU time in it, read from /proc/thread-self/stat in 10 ms ticks; where there is no
   * such file, the whole process's CPU time), in ms.
   */
  readonly busiestMs: number;
  /** monitorEventLoopDelay's maximum, in ms, for the record. */
  readonly histogramMaxMs: number;
}

/**
 * Watch the event loop until `stop()`, which returns what was seen. Node measures the delays
 * (monitorEventLoopDelay); between two 10 ms ticks, the longest delay it saw is that gap's stall.
 */
export function watchLoop(): { stop(): LoopStalls } {
  const whole = monitorEventLoopDelay({ resolution: 10 });
  const sinceTick = monitorEventLoopDelay({ resolution: 10 });
  whole.enable();
  sinceTick.enable();
  let lastCpu = mainThreadCpuMs();
  let longestMs = 0;
  let busiestMs = 0;
  const tick = setInterval(() => {
    const cpu = mainThreadCpuMs();
    const gap = sinceTick.max / 1e6;
    sinceTick.reset();
    longestMs = Math.max(longestMs, gap);
    // A clock tick of CPU time is 10 ms: the thread's time within a gap is known to that much.
    busiestMs = Math.max(busiestMs, Math.min(gap, cpu - lastCpu - 10));
    lastCpu = cpu;
  }, 10);
  return {
    stop() {
      clearInterval(tick);
      whole.disable();
      sinceTick.disable();
      return { longestMs, busiestMs, histogramMaxMs: whole.max / 1e6 };
    },
  };
}

/** The main thread's CPU time in ms (Linux: utime + stime of /proc/thread-self/stat, in clock ticks of 10 ms). */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5), counted from the state (field 3) here.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  }
}
