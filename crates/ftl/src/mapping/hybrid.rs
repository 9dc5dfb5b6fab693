//! Hybrid mapping (placeholder until implemented).
use crate::error::{FtlResult, config_error};
use crate::flash::Flash;
use crate::flash::emit::Tag;
use nandlab_nand::Geometry;

#[derive(Debug)]
pub(crate) struct HybridFtl {
    logical_pages: u32,
}
impl HybridFtl {
    pub fn new(_g: &Geometry, logical_pages: u32, _stripe: Vec<u32>, _t: u32, _r: u32) -> Self {
        HybridFtl { logical_pages }
    }
    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }
    pub fn write(&mut self, _f: &mut Flash, _l: u32, _t: Tag, _d: Option<&[u8]>) -> FtlResult<()> {
        Err(config_error(
            "ftl.mapping",
            "hybrid mapping not implemented",
        ))
    }
    pub fn trim(&mut self, _f: &mut Flash, _l: u32) {}
    pub fn locate(&self, _l: u32) -> u32 {
        crate::flash::blocks::NONE
    }
    pub fn next_erase_block_valid_lpas(&mut self, _f: &Flash, out: &mut Vec<u32>) {
        out.clear();
    }
    pub fn check(&self, _f: &Flash) -> Result<(), String> {
        Ok(())
    }
}
