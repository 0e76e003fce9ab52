// The `onto` program (also `kubectl onto`): one commander tree, each command in its own
// module under commands/, imported only when it runs (commands/catalog.ts), so a command starts
// with what it needs and nothing else. Exit codes: 0 success, 1 the command found problems
// (invalid spec, drift, failed upgrade), 2 usage or environment errors.
import { Command } from "commander";
import { COMMANDS, type CommandEntry } from "./commands/catalog.js";

/**
 * The program with the commands `argv` (the user's arguments) can reach: the one it names, or,
 * for the top-level help and unknown commands, every command as its catalog entry (description
 * and usage, enough for the help and for commander's "did you mean").
 */
export async function buildProgram(argv: string[] = process.argv.slice(2)): Promise<Command> {
  const program = new Command("onto")
    .description("Operate coomia-dip platforms described by OntoPlatform resources")
    .showHelpAfterError()
    .exitOverride((err) => {
      // commander's own exits (help, version) keep their code; usage errors become 2.
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") process.exit(0);
      process.exit(2);
    });
  const named = argv[0] === "help" ? argv[1] : argv[0];
  const entry = COMMANDS.find((c) => c.name === named);
  if (entry) {
    program.addCommand(await entry.load());
    return program;
  }
  const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
  program.configureHelp({
    subcommandTerm: (cmd) => terms.get(cmd.name()) ?? cmd.name(),
  });
  for (const c of COMMANDS) program.addCommand(placeholder(c));
  return program;
}

/** A catalog entry standing in for its command in the top-level help; never run. */
function placeholder(entry: CommandEntry): Command {
  return new Command(entry.name).description(entry.summary);
}

// A reader that goes away (`onto status x | head -1`) is not an error: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
}

await (await buildProgram()).parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(2);
});
