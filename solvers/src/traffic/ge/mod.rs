use crate::Registry;

pub fn register(_r: &mut Registry) {}
