// The `onto` program (also `kubectl onto`): one commander tree, each command in its own
// module under commands/. Exit codes: 0 success, 1 the command found problems (invalid spec,
// drift, failed upgrade), 2 usage or environment errors.
import { Command } from "commander";
import { clusterCommand } from "./commands/cluster.js";
import { renderCommand } from "./commands/render.js";
import { operatorCommand } from "./commands/operator.js";
import { validateCommand } from "./commands/validate.js";
import { statusCommand } from "./commands/status.js";
import { upgradeCommand } from "./commands/upgrade.js";
import { pauseCommand, resumeCommand } from "./commands/pause.js";
import { diffCommand } from "./commands/diff.js";
import { demoCommand } from "./commands/demo.js";
import { imagesCommand } from "./commands/images.js";
import { switchoverCommand } from "./commands/switchover.js";

export function buildProgram(): Command {
  const program = new Command("onto")
    .description("Operate coomia-dip platforms described by OntoPlatform resources")
    .showHelpAfterError()
    .exitOverride((err) => {
      // commander's own exits (help, version) keep their code; usage errors become 2.
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") process.exit(0);
      process.exit(2);
    });
  program.addCommand(clusterCommand());
  program.addCommand(renderCommand());
  program.addCommand(operatorCommand());
  program.addCommand(validateCommand());
  program.addCommand(statusCommand());
  program.addCommand(upgradeCommand());
  program.addCommand(switchoverCommand());
  program.addCommand(pauseCommand());
  program.addCommand(resumeCommand());
  program.addCommand(diffCommand());
  program.addCommand(imagesCommand());
  program.addCommand(demoCommand());
  return program;
}

// A reader that goes away (`onto status x | head -1`) is not an error: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });
}

await buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  });
