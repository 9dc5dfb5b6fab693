//! NAND flash chip model (NANDFlashSim fidelity).
