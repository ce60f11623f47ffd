//! enroot's file formats: the fstab lines hooks append to ENROOT_MOUNTS and the KEY=VALUE lines
//! of ENROOT_ENVIRON (spec enroot-hook-contract.md §2).

pub mod environ;
pub mod fstab;
