/**
 * What every `mountbox` command shares: where it writes, and the error for
 * bad usage (printed with a pointer to the command's --help, exit 2).
 */

/** Where the CLI writes; replaceable for tests. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Set when the CLI runs on a terminal (stdin and stdout both): `run` draws its live view there. */
  readonly terminal?: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream } | undefined;
}

/** Bad usage of a command: the CLI prints it with a pointer to --help. */
export class UsageError extends Error {}
