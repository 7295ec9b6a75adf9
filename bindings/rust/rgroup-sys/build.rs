// Link librgroup as pkg-config finds it: the installed library, or a
// build tree's when PKG_CONFIG_PATH names its meson-uninstalled directory
// (pkg-config then prefers rgroup-uninstalled.pc). The version is the
// first with everything rgroup.h declares here.
fn main() {
    let lib = match pkg_config::Config::new()
        .atleast_version("0.2")
        .probe("rgroup")
    {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!("rgroup-sys: librgroup not found through pkg-config: {}", e);
            eprintln!(
                "install it (meson install), or set PKG_CONFIG_PATH to BUILD/meson-uninstalled"
            );
            std::process::exit(1);
        }
    };
    // Link again when the library changes: its symbols' versions are part
    // of what a program binds to.
    for dir in &lib.link_paths {
        for name in ["librgroup.so", "librgroup.a"] {
            let f = dir.join(name);
            if f.exists() {
                println!("cargo:rerun-if-changed={}", f.display());
            }
        }
    }
}
