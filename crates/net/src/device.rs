//! Choosing the compute device at run time (`--device cpu|cuda:0|wgpu`).

use burn::tensor::Device;

use crate::error::NetError;

/// The device named by `spec`: `cpu` (burn's flex backend), `cuda` or `cuda:N` (needs the
/// `cuda` feature), `wgpu` (needs the `wgpu` feature).
pub fn parse_device(spec: &str) -> Result<Device, NetError> {
    let fail = |reason: &str| NetError::Device { spec: spec.to_string(), reason: reason.to_string() };
    let (kind, index) = match spec.split_once(':') {
        Some((kind, index)) => {
            let index: usize = index.parse().map_err(|_| fail("the index after `:` must be a number"))?;
            (kind, Some(index))
        }
        None => (spec, None),
    };
    match kind {
        "cpu" if index.is_none() => Ok(Device::flex()),
        "cpu" => Err(fail("the CPU takes no index")),
        "cuda" => cuda(index).ok_or_else(|| fail("this build has no CUDA backend (rebuild with `--features cuda`)")),
        "wgpu" => wgpu(index).ok_or_else(|| fail("this build has no wgpu backend (rebuild with `--features wgpu`)")),
        _ => Err(fail("expected cpu, cuda, cuda:N or wgpu")),
    }
}

#[cfg(feature = "cuda")]
fn cuda(index: Option<usize>) -> Option<Device> {
    use burn::tensor::DeviceIndex;
    Some(Device::cuda(index.map_or(DeviceIndex::Default, DeviceIndex::Specified)))
}

#[cfg(not(feature = "cuda"))]
fn cuda(_index: Option<usize>) -> Option<Device> {
    None
}

#[cfg(feature = "wgpu")]
fn wgpu(index: Option<usize>) -> Option<Device> {
    use burn::tensor::DeviceKind;
    Some(Device::wgpu(index.map_or(DeviceKind::DefaultDevice, DeviceKind::DiscreteGpu)))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu(_index: Option<usize>) -> Option<Device> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_parses_and_bad_specs_are_refused_with_the_reason() {
        assert!(parse_device("cpu").is_ok());
        let err = parse_device("tpu").unwrap_err().to_string();
        assert!(err.contains("`tpu`") && err.contains("expected cpu"), "{err}");
        let err = parse_device("cuda:x").unwrap_err().to_string();
        assert!(err.contains("must be a number"), "{err}");
        assert!(parse_device("cpu:1").is_err());
        #[cfg(not(feature = "cuda"))]
        assert!(parse_device("cuda:0").unwrap_err().to_string().contains("--features cuda"));
    }
}
