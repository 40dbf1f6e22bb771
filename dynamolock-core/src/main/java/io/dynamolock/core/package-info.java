/**
 * FIFO-fair, fenced distributed locks on one DynamoDB table: {@link io.dynamolock.core.LockTemplate}
 * and what it hands out ({@link io.dynamolock.core.LockHandle}) or throws
 * ({@link io.dynamolock.core.DynamoLockException} and its subclasses).
 *
 * <h2>Guarantees, and the test that checks each</h2>
 * The protocol (one item per lock holding the ticket counter and the whole queue) is described in
 * {@code internal.QueueTable}. Tests named here live in {@code dynamolock-core/src/test}: the contract
 * suite {@code LockTemplateContractTests} (public API only, DynamoDB Local as a server, faults through
 * SDK interceptors), {@code TableBootstrapTests}, and the multi-process and fault suites in
 * {@code reliability}.
 * <table>
 * <caption>R1-R12</caption>
 * <tr><th>requirement</th><th>checked by</th></tr>
 * <tr><td>R1 mutual exclusion under every interleaving, the late-enqueue race included</td>
 *     <td>{@code excludesMutuallyUnderContention}, {@code LateEnqueueRaceTests} (forced with a hook),
 *     {@code MultiProcessLockTests.contendingWorkersKeepExclusionOrderAndCounts}</td></tr>
 * <tr><td>R2 grants in ticket order; the ticket is a fencing token, increasing across idle periods and TTL</td>
 *     <td>{@code grantsInFifoOrderWithIncreasingFencingTokens}, {@code fencingTokensIncreaseAfterTheItemWasRemoved},
 *     {@code LockHistoryTests}</td></tr>
 * <tr><td>R3 uncontended: acquire in one request, release in one</td>
 *     <td>{@code uncontendedAcquireAndReleaseTakeOneRequestEach}</td></tr>
 * <tr><td>R4 no table-wide hot key: distinct locks never write the same item</td>
 *     <td>{@code distinctLocksNeverWriteTheSameItem}</td></tr>
 * <tr><td>R5 a holder learns of a lost lease at once ({@code onLost}, {@code isValid()})</td>
 *     <td>{@code holderLearnsOfAPurgedEntryWithinOneHeartbeat},
 *     {@code holderLearnsOfAnExpiredLeaseWhenRenewalsKeepFailing}</td></tr>
 * <tr><td>R6 bounded waiting cost; a same-JVM waiter is handed the lock without a request</td>
 *     <td>{@code sameJvmWaiterIsHandedTheLockWithoutARequest},
 *     {@code InjectedFaultTests.aSameJvmReleaseDuringTheEnqueueOfAWaiterHandsTheLockOverWithoutAPoll}; the cost
 *     per waiter in the benchmarks</td></tr>
 * <tr><td>waiting holds no thread ({@code acquireAsync}): the blocking guarantees through a future;
 *     cancelling it leaves no entry, also with the enqueue in flight or a grant racing the cancel</td>
 *     <td>{@code AsyncAcquireContractTests} ({@code manyAsyncWaitersAreServedInTicketOrderOnABoundedNumberOfThreads},
 *     {@code cancellingWhileTheEnqueueIsInFlightRemovesTheEntryOnceItLands}, {@code aGrantThatRacesWithACancelIsReleased},
 *     ...), {@code internal.WaitLoopTests} (the wait rules); 10,000 waiters in the benchmarks' async-waiters
 *     scenario</td></tr>
 * <tr><td>R6b a dead holder is replaced one lease after its last heartbeat</td>
 *     <td>{@code crashedHolderIsReplacedOneLeaseAfterItsLastHeartbeat},
 *     {@code MultiProcessLockTests.killedHolderIsReplacedByTheNextWaiterOneLeaseAfterItsLastHeartbeat}</td></tr>
 * <tr><td>R7 table growth bounded by the locks in use</td>
 *     <td>{@code timesOutAfterWaitAndLeavesNoEntry}, {@code purgesALongTailOfDeadEntries},
 *     {@code itemCarriesATtlPastEveryEntry}, {@code InjectedFaultTests} (no entry left on any failure)</td></tr>
 * <tr><td>R8 one acquisition = one identity (96 random bits), never a name, a counter or snapshot state</td>
 *     <td>{@code templatesWithTheSameOwnerNameNeverShareAnEntry},
 *     {@code aTemplateRebuiltWithTheSameOwnerNameQueuesBehindTheOldHolder},
 *     {@code InjectedFaultTests.retriedEnqueueAfterALostAnswerTakesOneTicketAndOneEntry} (an SDK retry still
 *     finds its own entry)</td></tr>
 * <tr><td>R9 the item's TTL is never earlier than any live entry's lease end plus a margin (never, while a
 *     fail-closed entry is in it); no write lowers it as a side effect</td>
 *     <td>{@code aShortLeaseNeverPullsTheItemTtlBelowALongLeaseHolder}, {@code itemCarriesATtlPastEveryEntry},
 *     {@code InjectedFaultTests.writesOfOtherEntriesNeverLowerTheTtlOfAnItemHoldingAFailClosedEntry},
 *     {@code LockBreakTests.theItemStaysImmortalUntilItsLastFailClosedEntryLeaves}</td></tr>
 * <tr><td>R10 re-entry is lexical: only inside a scope ({@code execute}, {@code inScope}, a {@code @QueueLocked}
 *     method, a {@code LockScope} passed to {@code acquireAsync}) that holds the lock</td>
 *     <td>{@code reentersInsideTheScopeOfExecuteOnly}, {@code aHandleFromAcquireIsNotJoinedByLaterWorkOnTheSameThread},
 *     {@code aThreadStopsJoiningWhenTheScopeEnds}, {@code inScopeLetsNestedCallsJoinAHandleFromAcquire};
 *     with an explicit {@code LockScope}: {@code AsyncAcquireContractTests.aScopeThatHoldsTheLockIsJoinedAndNothingElseIs},
 *     {@code theScopeOfExecuteIsTheSameValueAsAnExplicitOne}</td></tr>
 * <tr><td>R11 lease loss reported when the lease as last confirmed ends, whatever renewals are in flight, and
 *     after {@code close()}</td>
 *     <td>{@code aHungRenewalDoesNotDelayTheLossOfTheLease}, {@code aHandleHeldWhenItsTemplateClosesIsReportedLostWhenItsLeaseEnds},
 *     {@code aWaiterWhoseLeaseRanOutIsNeverGranted}</td></tr>
 * <tr><td>R12 renewal capacity grows with what the JVM holds</td>
 *     <td>{@code slowRenewalsDoNotCostHealthyLocksTheirLease}, {@code hungRenewalsOfOtherLocksDoNotCostALeaseItsLife};
 *     10,000 locks in the benchmarks' renewal-capacity scenario</td></tr>
 * <tr><td>read/write locks and semaphores on the same queue ({@link io.dynamolock.core.LockMode},
 *     {@link io.dynamolock.core.LockRequest#permits()}): a shared entry holds when every entry ahead is shared, an
 *     exclusive one when fewer than the item's permits are ahead; ticket order between them, so neither starves; the
 *     rule is monotone, so the same-JVM handoff holds for it and a release hands over to every entry that may now
 *     hold; a request for other permits than the queued ones is refused, an emptied queue's permits taken over</td>
 *     <td>{@code internal.WaitLoopTests} (the rule, its monotonicity, what is purged), {@code LockPrimitivesContractTests}
 *     ({@code neverAWriterWithAnyoneElseInsideUnderContention}, {@code neverMoreThanItsPermitsInsideASemaphore},
 *     {@code aStreamOfReadersCannotHoldBackAWaitingWriter},
 *     {@code aWriterCannotHoldBackReadersQueuedBeforeTheNextWriterAndItsReleaseHandsOverToAllOfThem},
 *     {@code aCrashedReaderStopsNoOtherReaderAndItsWriterTakesOverAfterTheLease},
 *     {@code aRequestForOtherPermitsIsRefusedWhileTheQueueHoldsEntriesAndTakesOverAnEmptyOne})</td></tr>
 * <tr><td>several entities at once: one canonical order, one overall wait, all or nothing, every fencing token; a
 *     lost part is a lost whole</td>
 *     <td>{@code LockPrimitivesContractTests} ({@code transfersBetweenRandomPairsOfAccountsKeepTheTotalWithoutDeadlockOrTimeOut},
 *     {@code severalEntitiesAreAllOrNothingWhenTheWaitRunsOut},
 *     {@code cancellingAnAsyncAcquisitionOfSeveralEntitiesReleasesWhatWasTakenOffTheCancellingThread},
 *     {@code aPartLostWhileTheNextIsWaitedForIsNeverHandedOutAsHeld}, {@code aLostPartIsALostWhole},
 *     {@code aCrashedHolderOfSeveralEntitiesStopsNoOtherLockAndIsTakenOverAfterTheLease})</td></tr>
 * <tr><td>re-entry across modes: a shared request joins an exclusive scope; an exclusive one in a shared scope fails
 *     fast</td>
 *     <td>{@code aSharedRequestJoinsAnExclusiveScopeAndAnExclusiveOneInASharedScopeFailsFast}</td></tr>
 * <tr><td>wake-up hints (opt-in): a lost, duplicated, delayed, reordered or forged hint costs at most a poll or a
 *     read, never a grant out of order or a second holder; an unreachable hint port still gets the lock by polling</td>
 *     <td>{@code internal.WakeUpTemplateTests} ({@code forgedStaleReplayedAndMisroutedHintsNeverGrant},
 *     {@code aProcessWhoseHintPortIsUnreachableStillGetsTheLockByPolling}), {@code internal.HintCodecTests},
 *     {@code internal.HintEndpointTests}, {@code MultiProcessLockTests.contendingWorkersKeepExclusionOrderAndCounts}
 *     (hints off, plain, authenticated)</td></tr>
 * <tr><td>the hand-over (authenticated hints): a holder that is done lets in the waiters it knows before its release
 *     lands, never a fail-closed one, an entry it heard was broken, or on a state older than 10 s</td>
 *     <td>{@code internal.WakeUpTemplateTests} ({@code aHolderHandsTheLockToTheWaiterBehindItBeforeItsReleaseLands},
 *     {@code aFailClosedWaiterIsLetInOnlyOnceTheReleaseHasLanded}, {@code aWaiterBrokenMeanwhileIsNotHandedTheLock},
 *     {@code aBreakHeardWhileWaitingCountsForTheLaterHandOver}), {@code internal.WakeUpsTests},
 *     {@code internal.QueueStateTests}</td></tr>
 * <tr><td>predictive polling: at most one prediction's budget (4 reads) more than the fixed schedule while the queue
 *     does not move (queues of 1, 10, 100); a holder far past its history keeps its lease and the queue its order</td>
 *     <td>{@code internal.PredictivePollingTests.neverPollsMoreThanOnePredictionsBudgetMoreThanTodaysScheduleWhileTheQueueDoesNotMove},
 *     {@code internal.PredictivePollingTemplateTests}</td></tr>
 * <tr><td>start-up: concurrent bootstraps of one table all succeed; eventually consistent global tables refused</td>
 *     <td>{@code TableBootstrapTests.instancesBootstrappingTheSameTableAtOnceAllStart},
 *     {@code refusesAGlobalTableWithEventuallyConsistentReplicas}, {@code acceptsAGlobalTableWithStrongMultiRegionConsistency}</td></tr>
 * </table>
 */
package io.dynamolock.core;
