/** What one chaos run does; `--short` is the form CI runs. */
export type ChaosOptions = {
  rows: number;
  seconds: number;
  /** Writes per second on each side. */
  rate: number;
  /** Deliberate same-row, same-column conflicts per second (a write on each side). */
  conflicts: number;
  /** Share of inserts that put the same new id on both sides at once. */
  colliding: number;
  /** SIGKILL the worker every 4-12 s (and the api now and then), restarting it at once. */
  kills: boolean;
  /** Terminate Lockstep's database connections now and then. */
  terminate: boolean;
  json: boolean;
  /** Seconds to wait for the two sides to converge after the writes stop. */
  settleSeconds: number;
  /** Most seconds from a worker kill until a write made then is on the other side (the target). */
  recoveryTarget: number;
};

const LONG: ChaosOptions = {
  rows: 10_000,
  seconds: 60,
  rate: 100,
  conflicts: 2,
  colliding: 0.2,
  kills: true,
  terminate: true,
  json: false,
  settleSeconds: 120,
  recoveryTarget: 5,
};

const SHORT: Partial<ChaosOptions> = { rows: 2_000, seconds: 20, rate: 25, conflicts: 1, settleSeconds: 60 };

export function parseOptions(argv: string[]): ChaosOptions {
  const o: ChaosOptions = { ...LONG, ...(argv.includes('--short') ? SHORT : {}) };
  const num = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? Number(argv[i + 1]) : undefined;
  };
  for (const [flag, key] of [
    ['--rows', 'rows'],
    ['--seconds', 'seconds'],
    ['--rate', 'rate'],
    ['--conflicts', 'conflicts'],
    ['--colliding', 'colliding'],
    ['--settle', 'settleSeconds'],
    ['--recovery-target', 'recoveryTarget'],
  ] as const) {
    const v = num(flag);
    if (v !== undefined && Number.isFinite(v)) o[key] = v;
  }
  if (argv.includes('--no-kills')) o.kills = false;
  if (argv.includes('--no-terminate')) o.terminate = false;
  o.json = argv.includes('--json');
  return o;
}
