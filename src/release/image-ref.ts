// Image references: how a release's image (repository, tag, digest) becomes the string a pod
// runs, and how a mirror registry rewrites it. A mirror keeps the repository path and the
// tag/digest and replaces only the registry: docker.io/library/postgres:16.6 under
// mirror.example.com/onto becomes mirror.example.com/onto/library/postgres:16.6, the layout
// `skopeo sync`, `crane copy` and registry pull-through caches produce. Parsing follows the
// distribution reference grammar (@swimlane/docker-reference), so Docker Hub's short names
// (postgres, minio/minio) expand the way a container runtime expands them.
import { parseFamiliarName } from "@swimlane/docker-reference";
import type { ReleaseImage } from "../api/index.js";

/** `repository:tag`, or `repository:tag@digest` when the release pins a digest. */
export function formatImage(repository: string, image: Pick<ReleaseImage, "tag" | "digest">): string {
  return `${repository}:${image.tag}${image.digest ? `@${image.digest}` : ""}`;
}

/** The registry-relative path of an image (library/postgres, coomia-dip/gateway). */
export function repositoryPath(image: string): string {
  const ref = parseFamiliarName(image);
  if (!ref.repository) throw new Error(`image "${image}" has no repository`);
  return ref.repository;
}

/** `image` pulled from `mirror` (a registry host with an optional path) instead of its own registry. */
export function mirroredImage(image: string, mirror: string): string {
  let ref;
  try {
    ref = parseFamiliarName(image);
  } catch (err) {
    throw new Error(
      `image "${image}" is not a valid reference: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const base = mirror.replace(/\/+$/, "");
  return `${base}/${ref.repository ?? ""}${ref.tag ? `:${ref.tag}` : ""}${ref.digest ? `@${ref.digest}` : ""}`;
}
