//! `run --device timed:sim:PRESET[:…]`: the device model on the real clock inside the
//! process, as the engine's backend (no FUSE, no root).

use ioslice_sim::preset::DeviceSpec;

/// The backend a `timed:` device names; `None` for any other device.
pub fn timed_device(device: &str) -> Result<Option<ioslice_runner::DeviceBackend>, String> {
    let Some(model) = device.strip_prefix("timed:") else {
        return Ok(None);
    };
    let spec: DeviceSpec = model
        .parse()
        .map_err(|e| format!("--device {device}: {e}"))?;
    let open = move || {
        let backend =
            ioslice_emulate::timed::TimedBackend::new(&spec).map_err(|e| e.to_string())?;
        let geometry = backend.geometry();
        Ok((
            Box::new(backend) as Box<dyn ioslice_engine::Backend>,
            geometry,
        ))
    };
    Ok(Some(ioslice_runner::DeviceBackend::new(
        std::sync::Arc::new(open),
    )))
}
