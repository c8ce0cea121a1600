//! Body renderers, one per well-known kind or generic view. Each writes into an [`Out`]
//! and stops when it is full.
//!
//! [`Out`]: crate::out::Out

pub(crate) mod card;
pub(crate) mod diff;
pub(crate) mod file_list;
pub(crate) mod image;
pub(crate) mod markdown;
pub(crate) mod records;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod tree;
