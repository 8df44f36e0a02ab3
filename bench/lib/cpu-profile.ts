/** A V8 CPU profile as the inspector's `Profiler.stop` returns it (the fields read here). */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  /** Microseconds between samples, one per sample. */
  timeDeltas: number[];
}

export interface CallFrame {
  functionName: string;
  url: string;
}

/**
 * Self time (µs) summed per part, where `partOf` names the part of each sampled function (the
 * frame on top of the stack). Self time, not inclusive: every sample counts once.
 */
export function selfTimeByPart(profile: CpuProfile, partOf: (frame: CallFrame) => string): Map<string, number> {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parts = new Map<string, number>();
  profile.samples.forEach((nodeId, index) => {
    const part = partOf(frames.get(nodeId)!);
    parts.set(part, (parts.get(part) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  return parts;
}

/** A function's place as a reader finds it: the module's path from the repository (or `node:…`, or the native name) and its name. */
const placeOf = (frame: CallFrame): string => {
  const path = frame.url.replace(/^file:\/\/.*?\/(?=(src|node_modules|bench)\/)/, '');
  return `${frame.functionName || '(anonymous)'} ${path || '(native)'}`;
};

/** The `count` functions with the most self time (µs), those of `idle` excluded, highest first. */
export function topFunctions(profile: CpuProfile, count: number): { place: string; micros: number }[] {
  const byPlace = selfTimeByPart(profile, placeOf);
  return [...byPlace]
    .filter(([place]) => !place.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([place, micros]) => ({ place, micros }));
}
