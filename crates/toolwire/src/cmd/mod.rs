//! One module per subcommand.

pub(crate) mod normalize;
pub(crate) mod render;
pub(crate) mod schema;
pub(crate) mod validate;
