import { describe, expect, it } from 'vitest';
import { createGpu, GpuUnavailableError, SWIFTSHADER_ICD } from './device';

describe('createGpu in Node', () => {
  it('names the missing Debian package when the SwiftShader driver is absent', async () => {
    const err = await createGpu({ swiftshaderIcd: '/nonexistent/vk_swiftshader_icd.json' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuUnavailableError);
    expect((err as GpuUnavailableError).reason).toBe('no-driver');
    expect((err as Error).message).toContain('apt-get install -y chromium');
  });

  it('finds SwiftShader by itself and surfaces device loss and validation errors as typed events', async () => {
    const gpu = await createGpu({ swiftshaderIcd: SWIFTSHADER_ICD });
    expect(gpu.info.isSoftware).toBe(true);
    expect(process.env.VK_ICD_FILENAMES).toBe(SWIFTSHADER_ICD);
    const events: string[] = [];
    gpu.onEvent((e) => events.push(e.type === 'uncaptured-error' ? `${e.type}:${e.kind}` : e.type));
    // MAP_READ may only be combined with COPY_DST: this descriptor raises a validation error.
    gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    await gpu.device.queue.onSubmittedWorkDone();
    await new Promise((r) => setTimeout(r, 50));
    gpu.destroy();
    const lost = await gpu.lost;
    expect(lost.reason).toBe('destroyed');
    expect(events).toContain('uncaptured-error:validation');
    expect(events).toContain('device-lost');
  });
});
