import { Command } from "commander";

export function clusterCommand(): Command {
  return new Command("cluster").description("Manage the embedded local Kubernetes control plane");
}
