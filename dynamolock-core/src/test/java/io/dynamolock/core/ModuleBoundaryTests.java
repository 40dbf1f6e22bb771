package io.dynamolock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The engine stays out of reach: the module exports the API package and nothing else. */
class ModuleBoundaryTests {

    @Test
    void onlyTheApiPackageIsExported() throws IOException {
        ModuleDescriptor descriptor;
        try (InputStream in = Files.newInputStream(Path.of("target", "classes", "module-info.class"))) {
            descriptor = ModuleDescriptor.read(in);
        }
        assertThat(descriptor.name()).isEqualTo("io.dynamolock.core");
        assertThat(descriptor.exports()).extracting(ModuleDescriptor.Exports::source)
                .containsExactly("io.dynamolock.core");
    }
}
