//! Sets up the link of the Node-API addon (napi-build: the platform flags a cdylib that
//! node loads needs).

fn main() {
    napi_build::setup();
}
