/**
 * `kopf-gen/generator`: the generator as a library (`init()`, `generate()`, `add()`), re-exported
 * from its own package, `@kopf-gen/generator`, which holds the generator's toolchain so that
 * operators' production installs do not. Importing this subpath needs that package installed (it
 * is a devDependency of generated projects); without it the import fails naming the package.
 */
export * from '@kopf-gen/generator';
