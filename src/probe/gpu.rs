//! NVIDIA GPUs from the PCI bus (vendor 0x10de, display or 3D controller class), no NVML needed.

use super::model::Gpu;
use super::pci;
use super::sysroot::SysRoot;
use std::path::{Path, PathBuf};

/// Device ids of the data-centre parts we are asked about most; anything else shows its raw id.
const MODELS: &[(u32, &str)] = &[
    (0x20b0, "NVIDIA A100-SXM4-40GB"),
    (0x20b2, "NVIDIA A100-SXM4-80GB"),
    (0x20b5, "NVIDIA A100 80GB PCIe"),
    (0x20f1, "NVIDIA A100-PCIE-40GB"),
    (0x2330, "NVIDIA H100 80GB HBM3"),
    (0x2331, "NVIDIA H100 PCIe"),
    (0x2324, "NVIDIA H800"),
    (0x2335, "NVIDIA H200"),
    (0x2901, "NVIDIA B200"),
];

pub fn read(sys: &SysRoot) -> Vec<Gpu> {
    let bus = PathBuf::from("sys/bus/pci/devices");
    // The driver lists the GPUs it bound; reading the vendor of every PCI function (hundreds on
    // a real node) is the fallback for nodes without the driver (captures, containers).
    let bound: Vec<String> = ["proc/driver/nvidia/gpus", "sys/bus/pci/drivers/nvidia"]
        .iter()
        .map(|d| sys.list(Path::new(d)).into_iter().filter(|n| super::pci::is_bdf(n)).collect::<Vec<_>>())
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    let by_driver = !bound.is_empty();
    let all = if by_driver { bound } else { sys.list(&bus) };
    // Cheap filter first: only the vendor and class of the hundreds of functions on a node. The
    // nvidia driver binds NVIDIA functions only, so its list needs the class check alone (it
    // also binds NVSwitches on some systems).
    // A full read gets the class with the function's other ids (one uevent): for the driver's
    // list, the check waits for it.
    let class_later = by_driver && sys.full();
    let candidates = crate::parallel::par_map(&all, |bdf| {
        let dir = bus.join(bdf);
        if !by_driver && sys.read(&dir.join("vendor")).as_deref() != Some("0x10de") {
            return None;
        }
        if class_later {
            return Some(dir);
        }
        let class = sys.read(&dir.join("class")).unwrap_or_default();
        (class.starts_with("0x0300") || class.starts_with("0x0302")).then_some(dir)
    });
    let mut gpus = Vec::new();
    for dir in candidates.into_iter().flatten() {
        let Some(f) = pci::function_at(sys, &dir) else {
            continue;
        };
        // VGA (0x0300) or 3D controller (0x0302): not an NVSwitch (0x0680) the driver also binds.
        if class_later && !f.class.is_some_and(|c| matches!(c >> 8, 0x0300 | 0x0302)) {
            continue;
        }
        gpus.push(gpu_of(sys, f));
    }
    gpus.sort_by_key(|a| bus_key(&a.pci.bdf));
    gpus
}

/// A GPU of the function `f`: its model, UUID and minor from the driver where read (they are
/// descriptive: the hook's decisions use the PCI path only).
fn gpu_of(sys: &SysRoot, f: super::model::PciFunction) -> Gpu {
    let info = if sys.full() {
        sys.read(&Path::new("proc/driver/nvidia/gpus").join(&f.bdf).join("information"))
    } else {
        None
    };
    let field = |k: &str| {
        info.as_deref().and_then(|t| {
            t.lines().find_map(|l| l.strip_prefix(k).map(|v| v.trim_start_matches(':').trim().to_string()))
        })
    };
    // Without the full read the id is not in `f`; the model needs it (NVLink ceilings).
    let device = f.device;
    let model = field("Model")
        .or_else(|| device.and_then(|d| MODELS.iter().find(|m| m.0 == d)).map(|m| m.1.to_string()))
        .unwrap_or_else(|| format!("NVIDIA device 10de:{:04x}", device.unwrap_or(0)));
    Gpu { model, uuid: field("GPU UUID"), minor: field("Device Minor").and_then(|m| m.parse().ok()), pci: f }
}

/// PCI bus order as CUDA_DEVICE_ORDER=PCI_BUS_ID and nvidia-smi use it: domain, bus, device, fn.
pub fn bus_key(bdf: &str) -> (u32, u32, u32, u32) {
    let mut it = bdf.rsplitn(3, ':');
    let devfn = it.next().unwrap_or("");
    let bus = u32::from_str_radix(it.next().unwrap_or(""), 16).unwrap_or(u32::MAX);
    let dom = u32::from_str_radix(it.next().unwrap_or(""), 16).unwrap_or(u32::MAX);
    let (d, f) = devfn.split_once('.').unwrap_or(("", ""));
    (dom, bus, u32::from_str_radix(d, 16).unwrap_or(u32::MAX), f.parse().unwrap_or(u32::MAX))
}
