//! How another Rust project uses dsh crates: a binary of its own that registers the plugins it
//! needs (one of them its own), composes its own profile, and drives an agent through a turn.
//!
//! Run it (it talks to DeepSeek, so it needs a key):
//!
//! ```text
//! DEEPSEEK_API_KEY=sk-... cargo run -p dsh-embed-example -- "How many words are in 'to be or not to be'?"
//! ```
//!
//! # Copy this into your own project
//!
//! Depend on the crates you mount, from git or from a checkout (inside this workspace the
//! example says `workspace = true` instead):
//!
//! ```toml
//! [dependencies]
//! dsh-kernel = { git = "https://github.com/dsh-rs/dsh" }             # or path = "../dsh/crates/core/kernel"
//! dsh-compose = { git = "https://github.com/dsh-rs/dsh" }
//! dsh-session = { git = "https://github.com/dsh-rs/dsh" }
//! dsh-persistence-jsonl = { git = "https://github.com/dsh-rs/dsh" }  # or dsh-persistence-sqlite
//! dsh-llm = { git = "https://github.com/dsh-rs/dsh" }
//! dsh-llm-deepseek = { git = "https://github.com/dsh-rs/dsh" }
//! dsh-system-prompt = { git = "https://github.com/dsh-rs/dsh" }
//! dsh-tools = { git = "https://github.com/dsh-rs/dsh" }
//! dsh-agent-loop = { git = "https://github.com/dsh-rs/dsh" }
//! tokio = { version = "1", features = ["rt-multi-thread"] }
//! serde_json = "1"
//! ```
//!
//! Then the three steps, each in [`embed`]:
//!
//! 1. **Register plugins** ([`embed::registry`]): a [`dsh_compose::Registry`] maps the names
//!    rows use to plugins. Register exactly the dsh plugins your profile names, plus your own
//!    ([`word_count::WordCountPlugin`] here: a [`dsh_kernel::Plugin`] that injects `tools` and
//!    registers a [`dsh_tools::FnTool`]).
//! 2. **Compose a profile** ([`embed::composition`]): your rows as a YAML patch list
//!    ([`PROFILE`], from `profile.yml`), parsed with [`dsh_compose::Layer::bundle`] and composed.
//!    More layers (a user's patch file) would go after it in the same slice.
//! 3. **Drive an agent** ([`embed::boot_profile`], then [`embed::run_turn`]): boot the
//!    composition on a [`dsh_kernel::Kernel`], take the `agents` service, create an agent,
//!    and run a turn with [`dsh_agent_loop::Agent::run_turn`], which waits for it, flushes
//!    the session and folds the log into a [`dsh_agent_loop::TurnSummary`]. Shut the kernel
//!    down at the end.

pub mod embed;
pub mod word_count;

/// This example's profile: the rows it boots, as a dsh patch list (`examples/embed/profile.yml`).
pub const PROFILE: &str = include_str!("../profile.yml");

/// What messages call [`PROFILE`].
pub const PROFILE_LABEL: &str = "examples/embed/profile.yml";

/// The environment variable naming the home directory (sessions go under `sessions/`).
pub const HOME_ENV: &str = "DSH_EMBED_HOME";

/// The home directory when [`HOME_ENV`] is unset, relative to the working directory.
pub const DEFAULT_HOME: &str = ".dsh-embed";

/// The environment variable naming the model.
pub const MODEL_ENV: &str = "DSH_EMBED_MODEL";

/// The model when [`MODEL_ENV`] is unset.
pub const DEFAULT_MODEL: &str = "deepseek-v4-flash";
