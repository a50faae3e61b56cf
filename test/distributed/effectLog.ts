import { readFile } from 'node:fs/promises';

// Reading what test/fixtures/liveness/effect.mjs did, from its log file (the tool runs in worker
// processes): one step per line, `<what> <idempotency key> <pid>`.

/** One step of one tool call. */
export interface EffectStep {
  readonly what: 'started' | 'effect' | 'aborted';
  readonly key: string;
  readonly pid: number;
}

/** Every step logged so far (none when the file does not exist yet). */
export async function readEffects(file: string): Promise<EffectStep[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [what, key, pid] = line.split(' ');
      return { what: what as EffectStep['what'], key: key ?? '', pid: Number(pid) };
    });
}

/** Resolves with the steps once `check` holds for them; fails after `ms`, saying what there was. */
export async function waitForEffects(file: string, check: (steps: EffectStep[]) => boolean, ms: number): Promise<EffectStep[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const steps = await readEffects(file);
    if (check(steps)) return steps;
    if (Date.now() > deadline) throw new Error(`the tool's steps did not come within ${ms} ms; so far: ${JSON.stringify(steps)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** How many times each key had its effect. */
export function effectsByKey(steps: readonly EffectStep[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const step of steps) if (step.what === 'effect') counts.set(step.key, (counts.get(step.key) ?? 0) + 1);
  return counts;
}
