/**
 * The command line of a bench script: `--name value` options, `--name` flags (the names the script
 * declares), and the arguments that are neither.
 */
export interface CommandLine {
  /** The value after `--name`, or undefined. */
  option(name: string): string | undefined;
  /** Whether flag `--name` (one of those declared) was given. */
  flag(name: string): boolean;
  /** The arguments that are not an option's name or value, in order. */
  readonly positional: readonly string[];
}

export function commandLine(flags: readonly string[] = [], args: readonly string[] = process.argv.slice(2)): CommandLine {
  const isFlag = (a: string | undefined) => a !== undefined && flags.some((f) => a === `--${f}`);
  return {
    option: (name) => {
      const i = args.indexOf(`--${name}`);
      return i < 0 ? undefined : args[i + 1];
    },
    flag: (name) => {
      if (!flags.includes(name)) throw new Error(`--${name} is not a declared flag`);
      return args.includes(`--${name}`);
    },
    positional: args.filter((a, i) => !a.startsWith('--') && !(args[i - 1]?.startsWith('--') && !isFlag(args[i - 1]))),
  };
}
