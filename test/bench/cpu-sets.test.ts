import { describe, expect, it } from 'vitest';
import { planCpuSets } from '../../bench/lib/cpu-sets.js';

const taskset = () => true;

describe('the bench pins servers and the load generator apart', () => {
  it('on two cores: each server on core 0, the generator on core 1', () => {
    expect(planCpuSets([], {}, 2, taskset)).toEqual({ server: '0', load: '1', serverCores: 1, loadCores: 1 });
  });

  it('on a few cores: the servers keep one, the generator takes the rest', () => {
    expect(planCpuSets([], {}, 4, taskset)).toEqual({ server: '0', load: '1-3', serverCores: 1, loadCores: 3 });
  });

  it('on a wide machine: 2 cores per server and 8 for the generator, as the reference runs', () => {
    expect(planCpuSets([], {}, 16, taskset)).toEqual({ server: '0-1', load: '2-9', serverCores: 2, loadCores: 8 });
  });

  it('takes the sets from BENCH_SERVER_CPUS and BENCH_LOAD_CPUS, counting the cores in them', () => {
    expect(planCpuSets([], { BENCH_SERVER_CPUS: '4,6', BENCH_LOAD_CPUS: '8-11' }, 16, taskset)).toEqual({
      server: '4,6',
      load: '8-11',
      serverCores: 2,
      loadCores: 4,
    });
  });

  it('does not pin with --unpinned, on one core, or without taskset', () => {
    expect(planCpuSets(['--unpinned'], {}, 16, taskset)).toBeUndefined();
    expect(planCpuSets([], {}, 1, taskset)).toBeUndefined();
    expect(planCpuSets([], {}, 16, () => false)).toBeUndefined();
  });
});
