//! One module per subcommand.

pub(crate) mod call;
pub(crate) mod chat;
pub(crate) mod export;
pub(crate) mod gc;
pub(crate) mod normalize;
pub(crate) mod render;
pub(crate) mod schema;
pub(crate) mod sessions;
pub(crate) mod show;
pub(crate) mod validate;
