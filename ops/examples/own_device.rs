//! An application's own wgpu device, handed to ops: the application
//! fills a buffer in a pass of its own, ops runs ONNX Relu on it in the
//! application's command encoder, and a second pass of the application's
//! doubles the result; one submission, read back the ordinary wgpu way.
//!
//! `cargo run --release --example own_device`

use ops::gpu::wgpu;
use ops::{onnx, DataType, HostTensor, Operator, TensorDesc};

const N: u32 = 16;

/// Pass 1: `x[i] = i - 8`.
const FILL: &str = "
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < 16u) { x[id.x] = f32(id.x) - 8.0; }
}";

/// Pass 2: `z[i] = 2 * y[i]`.
const DOUBLE: &str = "
@group(0) @binding(0) var<storage, read> y: array<f32>;
@group(0) @binding(1) var<storage, read_write> z: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < 16u) { z[id.x] = 2.0 * y[id.x]; }
}";

fn pipeline(device: &wgpu::Device, wgsl: &str) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: None,
        source: wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: None,
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

fn pass(
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[wgpu::BufferBinding<'_>],
) {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: wgpu::BindingResource::Buffer(b.clone()),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut p = encoder.begin_compute_pass(&Default::default());
    p.set_pipeline(pipeline);
    p.set_bind_group(0, &group, &[]);
    p.dispatch_workgroups(1, 1, 1);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use wgpu::BufferUsages as U;
    // The application's device, opened the ordinary way (a software
    // adapter such as lavapipe where there is no GPU).
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match pollster::block_on(instance.request_adapter(&Default::default())) {
        Ok(a) => a,
        Err(_) => pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            force_fallback_adapter: true,
            ..Default::default()
        }))?,
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    let ctx = ops::gpu::Context::from_device(device.clone(), queue.clone());

    let bytes = u64::from(N) * 4;
    let buffer = |usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    };
    let x = buffer(U::STORAGE | U::COPY_SRC | U::COPY_DST);
    let z = buffer(U::STORAGE | U::COPY_SRC);
    let staging = buffer(U::MAP_READ | U::COPY_DST);
    let desc = TensorDesc::new(DataType::Float32, [N]);
    let relu = onnx::ReluDesc::builder().x(desc.clone()).build()?;

    let mut encoder = device.create_command_encoder(&Default::default());
    pass(
        &device,
        &mut encoder,
        &pipeline(&device, FILL),
        &[x.as_entire_buffer_binding()],
    );
    // ops records into the application's encoder, between its passes.
    let x_t = ctx.wrap_buffer(x.clone(), desc)?;
    let mut rec = ctx.record_into(&mut encoder);
    let y = rec.run(&relu, &[&x_t])?.remove(0);
    let encoded = rec.finish()?;
    let y_binding = wgpu::BufferBinding {
        buffer: y.buffer(),
        offset: 0,
        size: std::num::NonZeroU64::new(bytes),
    };
    pass(
        &device,
        &mut encoder,
        &pipeline(&device, DOUBLE),
        &[y_binding, z.as_entire_buffer_binding()],
    );
    encoder.copy_buffer_to_buffer(&z, 0, &staging, 0, bytes);
    let index = queue.submit([encoder.finish()]);
    encoded.submitted(index).wait()?;

    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapping the result"));
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let got: Vec<f32> = bytemuck::pod_collect_to_vec(&staging.get_mapped_range(..)?);

    // The CPU reference of the same three steps.
    let xs: Vec<f32> = (0..N).map(|i| i as f32 - 8.0).collect();
    let cpu = relu.run_cpu(&[&HostTensor::from_slice([N], &xs)?])?;
    let want: Vec<f32> = cpu[0]
        .to_vec::<f32>()
        .ok_or("FLOAT32")?
        .iter()
        .map(|v| 2.0 * v)
        .collect();
    if got != want {
        return Err(format!("got {got:?}, want {want:?}").into());
    }
    println!("2 * relu(i - 8) = {got:?}");
    println!(
        "ops ran between two passes of the application's encoder on {} (equal to the CPU reference)",
        adapter.get_info().name
    );
    Ok(())
}
