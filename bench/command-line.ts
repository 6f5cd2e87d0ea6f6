/** The command line of a bench script: `--name value` options, and the arguments that are neither. */
export interface CommandLine {
  /** The value after `--name`, or undefined. */
  option(name: string): string | undefined;
  /** The arguments that are not an option's name or value, in order. */
  readonly positional: readonly string[];
}

export function commandLine(args: readonly string[] = process.argv.slice(2)): CommandLine {
  return {
    option: (name) => {
      const i = args.indexOf(`--${name}`);
      return i < 0 ? undefined : args[i + 1];
    },
    positional: args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')),
  };
}
