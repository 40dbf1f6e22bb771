package io.dynamolock.autoconfigure;

import static io.dynamolock.autoconfigure.UnboundPropertyFailureAnalyzerTests.fail;
import static io.dynamolock.autoconfigure.UnboundPropertyFailureAnalyzerTests.report;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A {@code dynamolock.*} duration written without a unit stops the start naming the property and the fix: Boot reads
 * a bare number as milliseconds, so {@code lease-duration=60}, meant as a minute, was a 60 ms lease that lost every
 * lock.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnitlessDurationTests {

    @Test
    void aLeaseWithoutAUnitStopsTheStartNamingTheFix(CapturedOutput output) {
        fail("--dynamolock.lease-duration=60");
        assertThat(report(output)).contains("dynamolock.lease-duration").contains("60")
                .contains("no unit").contains("write the unit: 60s");
    }

    /** {@code ${LOCK_LEASE:60}}, the form the README recommends for these properties, is judged as it resolves. */
    @Test
    void aPlaceholderResolvingToABareNumberIsRefusedToo(CapturedOutput output) {
        fail("--dynamolock.lease-duration=${LOCK_LEASE_UNSET_IN_TESTS:60}");
        assertThat(report(output)).contains("dynamolock.lease-duration").contains("resolved to '60'")
                .contains("no unit");
    }

    @Test
    void everyDurationNeedsItsUnit(CapturedOutput output) {
        fail("--dynamolock.poll-interval.min=50");
        assertThat(report(output)).contains("dynamolock.poll-interval.min").contains("no unit").contains("50ms");
    }
}
