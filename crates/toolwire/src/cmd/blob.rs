//! `toolwire blob KEY [-o FILE]`: a stored blob's bytes (an image, a recording a tool
//! returned) written to a file or to stdout, read in ranges so a large one is never held
//! whole.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use toolwire_agent::StoreLocation;
use toolwire_store::BlobKey;

use crate::{Outcome, data};

/// Bytes read from the store at a time.
const CHUNK: u64 = 4 << 20;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The blob's key, as results name it: blake3:<64 hex digits>.
    key: String,
    /// Write it to this file (default: stdout, unless stdout is a terminal).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let key = BlobKey::parse(args.key.trim()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let stores = data::open(place).await?;
    let size = stores
        .blobs()
        .size(&key)
        .await?
        .with_context(|| format!("no blob {key} in this store"))?;
    let mut sink: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None if std::io::stdout().is_terminal() => {
            bail!("{key} is {size} bytes of media: give -o FILE, or redirect stdout")
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut at = 0;
    while at < size {
        let end = (at + CHUNK).min(size);
        let bytes = stores.blobs().get_range(&key, at..end).await?;
        sink.write_all(&bytes)?;
        at = end;
    }
    sink.flush()?;
    Ok(Outcome::Ok)
}
