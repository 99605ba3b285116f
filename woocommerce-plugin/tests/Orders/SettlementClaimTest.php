<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Orders;

use ServicePay\WooCommerce\Orders\SettlementClaim;
use ServicePay\WooCommerce\Tests\Support\Concurrently;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

require_once __DIR__ . '/../support/Concurrently.php';

/**
 * @group wordpress
 */
final class SettlementClaimTest extends WordPressTestCase {

	public function test_a_key_is_taken_once_and_can_be_given_back(): void {
		$key = 'test:' . wp_generate_password( 12, false );
		$this->assertFalse( SettlementClaim::exists( $key ) );
		$this->assertTrue( SettlementClaim::take( $key, 1 ) );
		$this->assertFalse( SettlementClaim::take( $key, 1 ) );
		$this->assertTrue( SettlementClaim::exists( $key ) );
		SettlementClaim::release( $key );
		$this->assertTrue( SettlementClaim::take( $key, 1 ) );
	}

	public function test_exactly_one_of_eight_concurrent_php_processes_wins(): void {
		$key     = 'race:' . wp_generate_password( 12, false );
		$results = Concurrently::run( 8, 'claim', 1, array( $key ) );
		$this->assertCount( 8, $results );
		$this->assertSame( 1, count( array_filter( $results, static fn ( $r ) => true === $r['won'] ) ) );
		$this->assertTrue( SettlementClaim::exists( $key ) );
	}
}
